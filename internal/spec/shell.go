package spec

import (
	"fmt"
	"strings"
)

// This file quotes bound values for `bash -c`. The command is scanned with a small model
// of bash's quoting (words, '...', $'...', "...", `...`, $( ), comments, here-documents),
// and each value is escaped for the context it lands in, so it always reaches the program
// as exactly one piece of text and is never expanded or executed.

type frameKind int

const (
	frameWord     frameKind = iota // unquoted: the top level, or inside $( ), $(( )), (( ))
	frameSingle                    // '...'
	frameANSI                      // $'...'
	frameDouble                    // "..." (and $"...")
	frameBacktick                  // `...`
	frameComment                   // # to the end of the line
	frameHeredoc                   // a here-document body
	frameParam                     // ${...}
)

type frame struct {
	kind  frameKind
	depth int  // open ( of a nested word frame (0 at the top level), or open { of ${...}
	arith bool // $(( )) or (( )): << is a shift there, not a here-document
	// here-documents: the delimiter, whether it was quoted (body taken literally)
	// and whether leading tabs are stripped (<<-).
	delim     string
	literal   bool
	stripTabs bool
	lineOut   int    // offset in the output where the current body line starts
	lineValue string // the last value substituted on the current body line
}

type shellQuoter struct {
	src         string // the command with a NUL byte where each value goes
	vals, names []string
	next        int
	out         strings.Builder
	stack       []frame
	pending     []frame // here-documents whose bodies start at the next newline
	wordStart   bool
	lineStart   bool // at the start of a here-document body line
}

// quoteInto replaces the i-th NUL byte of src with vals[i], quoted for its context.
func quoteInto(src string, vals, names []string) (string, error) {
	for i, v := range vals {
		if strings.ContainsRune(v, 0) {
			return "", fmt.Errorf("value of ${{%s}} contains a NUL byte", names[i])
		}
	}
	q := &shellQuoter{src: src, vals: vals, names: names, stack: []frame{{kind: frameWord}}, wordStart: true}
	for i := 0; i < len(src); {
		n, err := q.step(i)
		if err != nil {
			return "", err
		}
		i += n
	}
	if err := q.checkBodyLine(); err != nil {
		return "", err
	}
	return q.out.String(), nil
}

func (q *shellQuoter) top() *frame   { return &q.stack[len(q.stack)-1] }
func (q *shellQuoter) push(f frame)  { q.stack = append(q.stack, f) }
func (q *shellQuoter) emit(s string) { q.out.WriteString(s) }

func (q *shellQuoter) pop() {
	if len(q.stack) > 1 {
		q.stack = q.stack[:len(q.stack)-1]
	}
}

func (q *shellQuoter) peek(i int) byte {
	if i < len(q.src) {
		return q.src[i]
	}
	return 0xff
}

// step consumes the text at src[i] and returns how many bytes it used (0 when it only
// left a frame, so that the enclosing frame sees the same byte).
func (q *shellQuoter) step(i int) (int, error) {
	c := q.src[i]
	if c == 0 {
		return 1, q.substitute()
	}
	switch q.top().kind {
	case frameSingle:
		q.emit(string(c))
		if c == '\'' {
			q.pop()
		}
		return 1, nil
	case frameComment:
		if c == '\n' {
			q.pop()
			return 0, nil
		}
		q.emit(string(c))
		return 1, nil
	case frameANSI:
		if c == '\\' {
			return q.escape(i)
		}
		q.emit(string(c))
		if c == '\'' {
			q.pop()
		}
		return 1, nil
	case frameDouble, frameBacktick:
		return q.quoted(i)
	case frameHeredoc:
		return q.heredoc(i)
	case frameParam:
		return q.param(i)
	}
	return q.word(i)
}

// escape copies a backslash and the byte it escapes.
func (q *shellQuoter) escape(i int) (int, error) {
	switch q.peek(i + 1) {
	case 0:
		return 0, fmt.Errorf("${{%s}} directly after a backslash is not supported", q.names[q.next])
	case 0xff:
		q.emit(`\`)
		return 1, nil
	}
	q.emit(q.src[i : i+2])
	return 2, nil
}

// dollar handles a $ outside single quotes: $( and $(( open a nested word frame, and in
// word frames $'...' and $"..." open quotes.
func (q *shellQuoter) dollar(i int, inWord bool) (int, error) {
	switch next := q.peek(i + 1); {
	case next == 0:
		return 0, fmt.Errorf("${{%s}} directly after $ is not supported", q.names[q.next])
	case next == '(' && q.peek(i+2) == '(':
		q.push(frame{kind: frameWord, depth: 2, arith: true})
		q.emit("$((")
		return 3, nil
	case next == '(':
		q.push(frame{kind: frameWord, depth: 1})
		q.emit("$(")
		q.wordStart = true
		return 2, nil
	case next == '{':
		q.push(frame{kind: frameParam, depth: 1})
		q.emit("${")
		return 2, nil
	case next == '\'' && inWord:
		q.push(frame{kind: frameANSI})
		q.emit("$'")
		return 2, nil
	case next == '"' && inWord:
		q.push(frame{kind: frameDouble})
		q.emit(`$"`)
		return 2, nil
	}
	q.emit("$")
	return 1, nil
}

// quoted handles the inside of "..." and `...`.
func (q *shellQuoter) quoted(i int) (int, error) {
	c := q.src[i]
	kind := q.top().kind
	switch {
	case c == '\\':
		return q.escape(i)
	case c == '$' && kind == frameDouble:
		return q.dollar(i, false)
	case c == '"' && kind == frameDouble, c == '`' && kind == frameBacktick:
		q.pop()
	case c == '`':
		q.push(frame{kind: frameBacktick})
	}
	q.emit(string(c))
	return 1, nil
}

// word handles unquoted text.
func (q *shellQuoter) word(i int) (int, error) {
	c, top := q.src[i], q.top()
	start := q.wordStart
	q.wordStart = strings.IndexByte(" \t\n;&|()<>", c) >= 0
	switch {
	case c == '\\':
		if q.peek(i+1) == '\n' {
			q.wordStart = start // a line continuation joins the word
		}
		return q.escape(i)
	case c == '$':
		return q.dollar(i, true)
	case c == '\'':
		q.push(frame{kind: frameSingle})
	case c == '"':
		q.push(frame{kind: frameDouble})
	case c == '`':
		q.push(frame{kind: frameBacktick})
	case c == '#' && start:
		q.push(frame{kind: frameComment})
	case c == '(' && top.depth > 0:
		top.depth++
	case c == '(' && start && q.peek(i+1) == '(':
		q.push(frame{kind: frameWord, depth: 2, arith: true})
		q.emit("((")
		return 2, nil
	case c == ')' && top.depth > 0:
		if top.depth--; top.depth == 0 {
			q.pop()
		}
	case c == '<' && q.peek(i+1) == '<' && !top.arith:
		if q.peek(i+2) == '<' {
			q.emit("<<<")
			return 3, nil
		}
		return q.heredocOperator(i)
	case c == '\n' && len(q.pending) > 0:
		q.emit("\n")
		f := q.pending[0]
		f.lineOut = q.out.Len()
		q.push(f)
		q.pending = q.pending[1:]
		q.lineStart = true
		return 1, nil
	}
	q.emit(string(c))
	return 1, nil
}

// param handles the inside of ${...}, only to find where it ends: values are not
// substituted there, since bash's quoting rules inside it differ between contexts.
func (q *shellQuoter) param(i int) (int, error) {
	c, top := q.src[i], q.top()
	switch c {
	case '\\':
		return q.escape(i)
	case '$':
		return q.dollar(i, true)
	case '\'':
		q.push(frame{kind: frameSingle})
	case '"':
		q.push(frame{kind: frameDouble})
	case '`':
		q.push(frame{kind: frameBacktick})
	case '{':
		top.depth++
	case '}':
		if top.depth--; top.depth == 0 {
			q.pop()
		}
	}
	q.emit(string(c))
	return 1, nil
}

// heredocOperator reads "<<[-]DELIM" and queues the here-document.
func (q *shellQuoter) heredocOperator(i int) (int, error) {
	f := frame{kind: frameHeredoc}
	j := i + 2
	if q.peek(j) == '-' {
		f.stripTabs = true
		j++
	}
	for q.peek(j) == ' ' || q.peek(j) == '\t' {
		j++
	}
	var delim strings.Builder
	for j < len(q.src) && strings.IndexByte(" \t\n;&|()<>", q.src[j]) < 0 {
		switch c := q.src[j]; c {
		case 0:
			return 0, fmt.Errorf("${{%s}} in a here-document delimiter is not supported", q.names[q.next])
		case '\'', '"':
			f.literal = true
			end := strings.IndexByte(q.src[j+1:], c)
			if end < 0 {
				end = len(q.src) - j - 1
			}
			delim.WriteString(q.src[j+1 : j+1+end])
			j += end + 2
		case '\\':
			f.literal = true
			if j+1 < len(q.src) {
				delim.WriteByte(q.src[j+1])
			}
			j += 2
		default:
			delim.WriteByte(c)
			j++
		}
	}
	j = min(j, len(q.src))
	if strings.ContainsRune(q.src[i:j], 0) {
		return 0, fmt.Errorf("${{%s}} in a here-document delimiter is not supported", q.names[q.next])
	}
	if f.delim = delim.String(); f.delim != "" {
		q.pending = append(q.pending, f)
	}
	q.emit(q.src[i:j])
	q.wordStart = false
	return j - i, nil
}

// heredoc handles a here-document body, ending it at the delimiter line.
func (q *shellQuoter) heredoc(i int) (int, error) {
	f := q.top()
	if q.lineStart {
		q.lineStart = false
		end := strings.IndexByte(q.src[i:], '\n')
		if end < 0 {
			end = len(q.src) - i
		}
		line := q.src[i : i+end]
		if f.stripTabs {
			line = strings.TrimLeft(line, "\t")
		}
		if line == f.delim {
			q.emit(q.src[i : i+end])
			q.pop() // the newline goes to the enclosing frame, which starts the next body
			q.wordStart = true
			return end, nil
		}
	}
	c := q.src[i]
	switch {
	case c == '\n':
		if err := q.checkBodyLine(); err != nil {
			return 0, err
		}
		q.lineStart = true
		f.lineOut = q.out.Len() + 1
	case f.literal:
	case c == '\\':
		return q.escape(i)
	case c == '$':
		return q.dollar(i, false)
	case c == '`':
		q.push(frame{kind: frameBacktick})
	}
	q.emit(string(c))
	return 1, nil
}

// checkBodyLine refuses a here-document body line that a value turned into the
// delimiter line, which would end the document early.
func (q *shellQuoter) checkBodyLine() error {
	f := q.top()
	if f.kind != frameHeredoc || f.lineValue == "" {
		return nil
	}
	line := q.out.String()[f.lineOut:]
	if f.stripTabs {
		line = strings.TrimLeft(line, "\t")
	}
	if line == f.delim {
		return fmt.Errorf("value of ${{%s}} would end the here-document", f.lineValue)
	}
	f.lineValue = ""
	return nil
}

// substitute writes the next value, quoted for the current frame.
func (q *shellQuoter) substitute() error {
	v, name := q.vals[q.next], q.names[q.next]
	q.next++
	q.wordStart, q.lineStart = false, false
	for _, f := range q.stack[:len(q.stack)-1] {
		if f.kind == frameHeredoc { // bash finds the body's end by lines, before parsing it
			return fmt.Errorf("${{%s}} nested inside a here-document is not supported", name)
		}
	}
	switch f := q.top(); f.kind {
	case frameWord:
		q.emit(quoteWord(v))
	case frameSingle:
		q.emit(strings.ReplaceAll(v, "'", `'\''`))
	case frameANSI:
		q.emit(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v))
	case frameDouble:
		q.emit(strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`").Replace(v))
	case frameComment:
		q.emit(strings.NewReplacer("\n", " ", "\r", " ").Replace(v))
	case frameBacktick:
		return fmt.Errorf("${{%s}} inside backquotes is not supported; use $( ) instead", name)
	case frameParam:
		return fmt.Errorf("${{%s}} inside ${...} is not supported", name)
	case frameHeredoc:
		if strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("value of ${{%s}} contains a newline, which a here-document cannot hold", name)
		}
		if !f.literal {
			v = strings.NewReplacer(`\`, `\\`, `$`, `\$`, "`", "\\`").Replace(v)
		}
		q.emit(v)
		f.lineValue = name
	}
	return nil
}

// quoteWord quotes a value for unquoted context: plain text as is, anything else in
// single quotes.
func quoteWord(v string) string {
	if v == "" {
		return "''"
	}
	for _, r := range v {
		if !isPlainRune(r) {
			return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
	}
	return v
}

func isPlainRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		strings.ContainsRune("_./:=,+@%-", r)
}
