package binding

import (
	"math"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What bash does with the arguments of some commands, as far as placing values goes.
// Each entry was checked against bash 5.2 with the value a[$(touch CANARY)].
var (
	// codeBuiltins run (part of) their arguments as code, or keep them to run later.
	codeBuiltins = setOf("eval", "trap", "compgen", "complete", "bind", "fc", "enable", "alias")
	// declBuiltins declare variables: "name=value" arguments, where a[...] in a name is evaluated.
	declBuiltins = setOf("declare", "typeset", "local", "export", "readonly")
	// shellNames run a script: after -c it is the first argument.
	shellNames = setOf("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash")
	// bashIntegerVars have the integer attribute from the start: bash evaluates what is
	// assigned to them as arithmetic.
	bashIntegerVars = setOf("BASHPID", "EUID", "HISTCMD", "OPTIND", "PPID", "RANDOM", "SRANDOM", "UID")
	// prefixBuiltins run the rest of the command as a command of their own.
	prefixBuiltins = setOf("builtin", "command", "exec")
	// otherReaders read some arguments as arithmetic, variable names or scripts.
	otherReaders = setOf("let", "source", ".", "test", "[")
)

// readsArgs reports whether the builtin name reads its arguments as code, arithmetic or
// variable names: as a command name, a value must not pick one of those, since the
// command's other arguments (other values among them) would then be read that way.
func readsArgs(name string) bool {
	_, opts := optionBuiltins[name]
	return opts || codeBuiltins[name] || declBuiltins[name] || prefixBuiltins[name] || otherReaders[name]
}

// optionBuiltins are builtins whose options or arguments are variable names (or code).
var optionBuiltins = map[string]optionSpec{
	"read":      {operands: "adinNptu", names: "a", rest: "n"},
	"mapfile":   {operands: "CcdnOsu", code: "C", rest: "n"},
	"readarray": {operands: "CcdnOsu", code: "C", rest: "n"},
	"printf":    {operands: "v", names: "v", rest: "od"},
	"wait":      {operands: "p", names: "p", rest: "o"},
	"unset":     {rest: "n"},
	"getopts":   {rest: "dnd"},
}

type optionSpec struct {
	operands string // option letters that take an operand
	names    string // of those, the ones whose operand is a variable name
	code     string // of those, the ones whose operand is code
	// rest is what the arguments after the options are, by position (the last one
	// repeats): n a variable name, o data that must not look like an option, d data.
	rest string
}

// operandOf returns the option letter of opt (a word like -rp) that takes an operand,
// and whether that operand is the next argument (rather than the rest of opt).
func (s optionSpec) operandOf(opt string) (byte, bool) {
	for i := 1; i < len(opt); i++ {
		if strings.IndexByte(s.operands, opt[i]) >= 0 {
			return opt[i], i == len(opt)-1
		}
	}
	return 0, false
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// scriptInfo is what the whole command tells about its parts: how to read literal
// words, and which variables may have the integer attribute (or be name references),
// since bash evaluates what is assigned to those as arithmetic.
type scriptInfo struct {
	text         string
	placeholders *regexp.Regexp
	intNames     map[string]string // variable → "integer variable" or "name reference"
	intAll       bool              // an integer declaration of computed names: any variable may be one
}

func scanScript(f *syntax.File, text, base string) *scriptInfo {
	in := &scriptInfo{text: text, placeholders: regexp.MustCompile(regexp.QuoteMeta(base) + `\d+Z`), intNames: map[string]string{}}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DeclClause:
			names, computed := in.clauseNames(n)
			in.declare(declFlagsOf(in, clauseWords(n)), names, computed)
		case *syntax.CallExpr:
			if cw := in.commandWord(n.Args); declBuiltins[cw.name] {
				args := n.Args[cw.idx+1:]
				names, computed := in.wordNames(args)
				in.declare(declFlagsOf(in, args), names, computed)
			}
		}
		return true
	})
	return in
}

func (in *scriptInfo) declare(f declFlags, names []string, computed bool) {
	if !f.integer && !f.nameref && !f.dynamic {
		return
	}
	kind := "integer variable"
	if f.nameref && !f.integer {
		kind = "name reference" // it may point at an integer variable
	}
	for _, n := range names {
		in.intNames[n] = kind
	}
	in.intAll = in.intAll || computed
}

// intReason says why an assignment to name is evaluated as arithmetic ("" when it is not).
func (in *scriptInfo) intReason(name string) string {
	switch {
	case bashIntegerVars[name]:
		return "an assignment to integer variable " + name
	case in.intNames[name] != "":
		return "an assignment to " + in.intNames[name] + " " + name
	case in.intAll:
		return "an assignment to " + name + ", which a declaration of computed names may have made an integer"
	}
	return ""
}

// declFlags are the attributes a declaration gives: integer (-i), name reference (-n),
// array (-a, -A), or unknown (an argument computed at run time could hold any option).
type declFlags struct{ integer, nameref, array, dynamic bool }

func declFlagsOf(in *scriptInfo, words []*syntax.Word) declFlags {
	var f declFlags
	for _, w := range words {
		head, whole := in.lit(w)
		switch {
		case head == "" && !whole && !in.startsWithPlaceholder(w):
			// A value is never an option here: classify checks it as a name.
			f.dynamic = true
		case strings.HasPrefix(head, "-"):
			f.dynamic = f.dynamic || !whole
			f.integer = f.integer || strings.ContainsRune(head[1:], 'i')
			f.nameref = f.nameref || strings.ContainsRune(head[1:], 'n')
			f.array = f.array || strings.ContainsAny(head[1:], "aA")
		}
	}
	return f
}

// startsWithPlaceholder reports whether a word's text begins with a value.
func (in *scriptInfo) startsWithPlaceholder(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	part := w.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) > 0 {
		part = dq.Parts[0]
	}
	from := int(part.Pos().Offset())
	switch p := part.(type) {
	case *syntax.SglQuoted:
		from++
		if p.Dollar {
			from++
		}
	case *syntax.Lit:
	default:
		return false
	}
	loc := in.placeholders.FindStringIndex(in.text[from:int(part.End().Offset())])
	return loc != nil && loc[0] == 0
}

// clauseWords are a declaration's arguments that the parser kept as words (options,
// quoted arguments).
func clauseWords(n *syntax.DeclClause) []*syntax.Word {
	var words []*syntax.Word
	for _, a := range n.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			words = append(words, a.Value)
		}
	}
	return words
}

func (in *scriptInfo) clauseNames(n *syntax.DeclClause) ([]string, bool) {
	var names []string
	computed := false
	for _, a := range n.Args {
		if a.Name != nil {
			names = append(names, a.Name.Value)
			computed = computed || in.placeholders.MatchString(a.Name.Value)
		}
	}
	more, c := in.wordNames(clauseWords(n))
	return append(names, more...), computed || c
}

// wordNames returns the variable names declared by words like x, x=1, a[2]=3; computed
// is true when a name is only known at run time.
func (in *scriptInfo) wordNames(words []*syntax.Word) ([]string, bool) {
	var names []string
	computed := false
	for _, w := range words {
		head, whole := in.lit(w)
		if strings.HasPrefix(head, "-") || strings.HasPrefix(head, "+") {
			continue
		}
		name, _, found := strings.Cut(head, "=")
		if (!whole && !found) || name == "" {
			computed = true
			continue
		}
		names = append(names, baseName(name))
	}
	return names, computed
}

// baseName is the variable of an assignment's left side: x of x, x+ or x[i].
func baseName(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, "+")
}

// cmdWord locates the command name of a simple command after the builtin, command and
// exec prefixes; name is "" when it is computed at run time.
type cmdWord struct {
	idx        int
	name       string
	lookupOnly bool // command -v/-V: the names are only looked up
}

func (in *scriptInfo) commandWord(args []*syntax.Word) cmdWord {
	i := 0
	for i < len(args) {
		t, ok := in.lit(args[i])
		if !ok {
			return cmdWord{idx: i}
		}
		switch t {
		case "builtin":
			i++
		case "command", "exec":
			i++
			var lookup bool
			i, lookup = in.prefixOptions(args, i, t)
			if lookup {
				return cmdWord{idx: i, lookupOnly: true}
			}
		default:
			return cmdWord{idx: i, name: t}
		}
	}
	return cmdWord{idx: i}
}

// prefixOptions skips the options of command (-p, -v, -V) or exec (-c, -l, -a name).
func (in *scriptInfo) prefixOptions(args []*syntax.Word, i int, prefix string) (int, bool) {
	lookup := false
	for i < len(args) {
		o, ok := in.lit(args[i])
		if !ok || len(o) < 2 || o[0] != '-' {
			break
		}
		i++
		if o == "--" {
			break
		}
		if prefix == "command" && strings.ContainsAny(o, "vV") {
			lookup = true
		}
		if prefix == "exec" && strings.HasSuffix(o, "a") {
			i++ // the name for argv[0]
		}
	}
	return i, lookup
}

// shellArgs is how a shell reads its arguments.
type shellArgs struct {
	script     int  // index of the first operand: the script file, or the code after -c; -1 if none
	hasC, hasS bool // -c: the first operand is code; -s: the script is read from stdin
	atOptions  bool // the first operand stands where options are read (no -- before it)
}

func (in *scriptInfo) shellScan(args []*syntax.Word) shellArgs {
	r := shellArgs{script: -1}
	for a := 0; a < len(args); a++ {
		t, ok := in.lit(args[a])
		switch {
		case ok && (t == "--" || t == "-"):
			if a+1 < len(args) {
				r.script = a + 1
			}
			return r
		case !ok || len(t) < 2 || (t[0] != '-' && t[0] != '+'):
			r.script, r.atOptions = a, true
			return r
		case strings.HasPrefix(t, "--"):
			if t == "--rcfile" || t == "--init-file" {
				a++
			}
		default:
			if t[0] == '-' {
				r.hasC = r.hasC || strings.ContainsRune(t, 'c')
				r.hasS = r.hasS || strings.ContainsRune(t, 's')
			}
			if strings.ContainsAny(t[1:], "oO") {
				a++ // -o option / -O shopt_option
			}
		}
	}
	return r
}

const (
	roleOther           = iota // an option's operand, or a positional argument after the script
	roleScript                 // the script file, or the code after -c
	roleScriptAtOptions        // the same, where a leading - would make it an option
)

func (in *scriptInfo) shellRole(args []*syntax.Word, j int) (int, bool) {
	r := in.shellScan(args)
	switch {
	case j != r.script:
		return roleOther, r.hasC
	case r.atOptions:
		return roleScriptAtOptions, r.hasC
	}
	return roleScript, r.hasC
}

// stdinScript reports whether the statement runs a shell (or source) that reads its
// script from standard input, where a here-document or a pipe would feed it code.
func (in *scriptInfo) stdinScript(s *syntax.Stmt) (string, bool) {
	if s == nil {
		return "", false
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return "", false
	}
	cw := in.commandWord(call.Args)
	switch {
	case cw.lookupOnly || cw.name == "":
		return "", false
	case cw.name == "source" || cw.name == ".":
		return cw.name, true
	case shellNames[lastElem(cw.name)]:
		r := in.shellScan(call.Args[cw.idx+1:])
		return cw.name, !r.hasC && (r.script < 0 || r.hasS)
	}
	return "", false
}

func lastElem(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// lit returns a word's text and true when it is entirely literal (quotes removed, no
// expansion, no placeholder); otherwise the literal text at its start and false.
func (in *scriptInfo) lit(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	return in.literalText(w.Parts, 0, math.MaxInt, false)
}

// prefix returns the text of the word before offset at, and whether it is all literal.
func (in *scriptInfo) prefix(w *syntax.Word, at int) (string, bool) {
	return in.literalText(w.Parts, 0, at, false)
}

// suffix returns the text of the word from offset at, and whether it is all literal.
func (in *scriptInfo) suffix(w *syntax.Word, at int) (string, bool) {
	return in.literalText(w.Parts, at, math.MaxInt, false)
}

// literalText returns the text bash makes of the parts between offsets from and stop,
// stopping at the first expansion or placeholder (then ok is false).
func (in *scriptInfo) literalText(parts []syntax.WordPart, from, stop int, dq bool) (string, bool) {
	var b strings.Builder
	for _, p := range parts {
		start, end := int(p.Pos().Offset()), int(p.End().Offset())
		if start >= stop {
			break
		}
		if end <= from {
			continue
		}
		var raw string
		switch p := p.(type) {
		case *syntax.Lit:
			raw = unescape(in.text[max(start, from):min(end, stop)], dq)
		case *syntax.SglQuoted:
			open := start + 1
			if p.Dollar {
				open++
			}
			raw = in.text[max(open, from):min(end-1, stop)]
			if p.Dollar && strings.Contains(raw, `\`) {
				return b.String(), false // $'\x41' and friends: not worth decoding here
			}
		case *syntax.DblQuoted:
			t, ok := in.literalText(p.Parts, from, stop, true)
			b.WriteString(t)
			if !ok {
				return b.String(), false
			}
			continue
		default:
			return b.String(), false
		}
		if loc := in.placeholders.FindStringIndex(raw); loc != nil {
			b.WriteString(raw[:loc[0]])
			return b.String(), false
		}
		b.WriteString(raw)
	}
	return b.String(), true
}

// unescape removes the backslashes of an unquoted (or, with dq, double-quoted) literal.
func unescape(s string, dq bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
		case !dq || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
		default:
			b.WriteString(s[i : i+2])
		}
		i++
	}
	return b.String()
}
