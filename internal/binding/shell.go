package binding

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file places bound values into a command for `bash -c`. The command, with a
// placeholder where each value goes, is parsed as bash by mvdan.cc/sh; the chain of
// syntax nodes down to each placeholder tells how bash will read the text there
// (shell_context.go). A value is then quoted for that spot, checked as an integer or a
// variable name where bash evaluates text even when it is quoted (arithmetic, subscripts,
// names), or refused where no quoting keeps it data (eval, trap, bash -c, ...). The parser
// is the only model of bash here, so quoting and evaluation cannot disagree about where
// a value lands.

// slot is one value to place: the ${{name}} it comes from and the byte range of its
// placeholder in the command given to the parser.
type slot struct {
	name, value string
	start, end  int
}

// placeholderBase returns a prefix for placeholders that does not occur in command.
// Placeholders (base + index + "Z") are plain identifiers, so they parse as one literal
// word part wherever a value can go, arithmetic and names included.
func placeholderBase(command string) string {
	base := "HANGARPH"
	for strings.Contains(command, base) {
		base += "X"
	}
	return base
}

func placeholder(base string, i int) string { return fmt.Sprintf("%s%dZ", base, i) }

// bindShell replaces each slot's placeholder in text by its value, written for where it lands.
func bindShell(text, base string, slots []slot) (string, error) {
	if len(slots) == 0 {
		return text, nil
	}
	for _, s := range slots {
		if strings.ContainsRune(s.value, 0) {
			return "", fmt.Errorf("value of ${{%s}} contains a NUL byte", s.name)
		}
	}
	f, err := parseBash(text)
	if err != nil {
		return "", parseError(err, base, slots)
	}
	info := scanScript(f, text, base)
	paths := locate(f, slots)
	var out strings.Builder
	var docs []placedDoc
	last := 0
	for i, s := range slots {
		if paths[i] == nil {
			return "", fmt.Errorf("${{%s}} is where Hangar cannot tell how bash reads it; move it into a plain argument", s.name)
		}
		sp, err := classify(paths[i], text, s, info)
		if err != nil {
			return "", err
		}
		v, err := sp.render(s)
		if err != nil {
			return "", err
		}
		out.WriteString(text[last:s.start])
		if sp.heredoc != nil {
			docs = append(docs, placedDoc{sp.heredoc, s.name, out.Len(), info})
		}
		out.WriteString(v)
		last = s.end
	}
	out.WriteString(text[last:])
	bound := out.String()
	for _, d := range docs {
		if err := d.check(bound); err != nil {
			return "", err
		}
	}
	return bound, nil
}

// parseBash parses text as a bash script, keeping comments (values may land in them).
func parseBash(text string) (f *syntax.File, err error) {
	defer func() {
		if r := recover(); r != nil { // a parser bug must not take the caller down
			f, err = nil, fmt.Errorf("%v", r)
		}
	}()
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
	return p.Parse(strings.NewReader(text), "")
}

// parseError explains a command that does not parse, with ${{...}} in place of placeholders.
func parseError(err error, base string, slots []slot) error {
	msg := err.Error()
	var pe syntax.ParseError
	if errors.As(err, &pe) { // columns count placeholders, not the user's ${{...}}
		msg = fmt.Sprintf("line %d: %s", pe.Pos.Line(), pe.Text)
	}
	ph := regexp.MustCompile(regexp.QuoteMeta(base) + `(\d+)Z`)
	name := func(p string) string {
		var i int
		if _, err := fmt.Sscan(ph.FindStringSubmatch(p)[1], &i); err != nil || i >= len(slots) {
			return p
		}
		return "${{" + slots[i].name + "}}"
	}
	if p := ph.FindString(msg); p != "" && strings.Contains(msg, "here-document") {
		return fmt.Errorf("%s in a here-document delimiter is not supported", name(p))
	}
	msg = ph.ReplaceAllStringFunc(msg, name)
	return fmt.Errorf("command is not valid bash (%s), so values cannot be placed in it safely", msg)
}

// locate returns, for each slot, the chain of nodes from the file down to the leaf (a
// literal, a single-quoted string or a comment) that holds its placeholder; nil when none does.
func locate(f *syntax.File, slots []slot) [][]syntax.Node {
	paths := make([][]syntax.Node, len(slots))
	var stack []syntax.Node
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n.(type) {
		case *syntax.Lit, *syntax.SglQuoted, *syntax.Comment:
			from, to := int(n.Pos().Offset()), int(n.End().Offset())
			for i, s := range slots {
				if from <= s.start && s.end <= to {
					paths[i] = slices.Clone(stack)
				}
			}
		}
		return true
	})
	return paths
}

// placedDoc is a value written into a here-document body, to check that it did not
// turn its line into the delimiter, which would end the document early.
type placedDoc struct {
	redir *syntax.Redirect
	name  string
	at    int // offset of the value in the bound command
	info  *scriptInfo
}

func (d placedDoc) check(bound string) error {
	delim, ok := d.info.lit(d.redir.Word)
	if !ok {
		return nil
	}
	start := strings.LastIndexByte(bound[:d.at], '\n') + 1
	end := len(bound)
	if i := strings.IndexByte(bound[d.at:], '\n'); i >= 0 {
		end = d.at + i
	}
	line := bound[start:end]
	if d.redir.Op == syntax.DashHdoc {
		line = strings.TrimLeft(line, "\t")
	}
	if line == delim {
		return fmt.Errorf("value of ${{%s}} would end the here-document", d.name)
	}
	return nil
}

// render writes a value for its spot, after the checks the spot asks for.
func (sp *spot) render(s slot) (string, error) {
	for _, c := range sp.checks {
		if err := c.check(s, sp.info); err != nil {
			return "", err
		}
	}
	v := s.value
	if sp.afterSign && sp.arithmetic() && (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) {
		return " " + v, nil
	}
	switch sp.quoting {
	case inWord:
		return quoteWordFor(v, sp.strict, sp.spellsKeyword(v)), nil
	case inSingle:
		return strings.ReplaceAll(v, "'", `'\''`), nil
	case inANSI:
		return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v), nil
	case inDouble:
		return strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`").Replace(v), nil
	case inComment:
		return strings.NewReplacer("\n", " ", "\r", " ").Replace(v), nil
	case inHeredoc, inLiteralHeredoc:
		if strings.ContainsAny(v, "\n\r") {
			return "", fmt.Errorf("value of ${{%s}} contains a newline, which a here-document cannot hold", s.name)
		}
		if sp.quoting == inHeredoc {
			v = strings.NewReplacer(`\`, `\\`, `$`, `\$`, "`", "\\`").Replace(v)
		}
		return v, nil
	}
	return v, nil // inRaw: only integers and names reach here (see classify)
}

func (sp *spot) arithmetic() bool {
	for _, c := range sp.checks {
		if c.kind == mustInteger {
			return true
		}
	}
	return false
}

// QuoteWord quotes a value for an unquoted word: plain text as is, anything else in
// single quotes.
func QuoteWord(v string) string { return quoteWordFor(v, false, false) }

// quoteWordFor is QuoteWord for a word in context: strict words (a command name, [[ ]] operands, words with brace or tilde
// expansion) keep fewer characters bare, since there "=", "-", "," or ":" change how
// bash reads the word; keywordRisk words could spell a reserved word such as "done".
func quoteWordFor(v string, strict, keyword bool) string {
	plain := v != "" && !keyword
	for i, r := range v {
		if !isPlainRune(r) || strict && !(isStrictRune(r) || r == '-' && i > 0) {
			plain = false
		}
	}
	if plain {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

func isPlainRune(r rune) bool {
	return isStrictRune(r) || strings.ContainsRune(":=,+@%-", r)
}

func isStrictRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./", r)
}

// spellsKeyword reports whether the value would make its word a reserved word.
func (sp *spot) spellsKeyword(v string) bool {
	switch {
	case sp.around == nil || !isLowerWord(v):
		return false
	case sp.aroundMulti:
		return true
	}
	return reservedWords[sp.around[0]+v+sp.around[1]]
}

var reservedWords = setOf("if", "then", "else", "elif", "fi", "case", "esac", "for", "select",
	"while", "until", "do", "done", "in", "function", "time", "coproc")

func isLowerWord(s string) bool {
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
