package binding

import (
	"fmt"
	"github.com/hangar-ml/hangar/internal/pattern"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// quoting is how the text around a value is quoted, which decides how the value is escaped.
type quoting int

const (
	inWord           quoting = iota // unquoted
	inSingle                        // '...'
	inANSI                          // $'...'
	inDouble                        // "..." and $"..."
	inHeredoc                       // here-document body with an unquoted delimiter
	inLiteralHeredoc                // here-document body with a quoted delimiter
	inComment                       // # to the end of the line
	inRaw                           // a name position (a=, for x in): only checked names and integers
)

// spot is what the syntax around a placeholder asks of its value.
type spot struct {
	quoting quoting
	strict  bool // see quoteWordFor
	// around is the rest of a one-part word made of lowercase letters and this value:
	// such a word could spell a reserved word (do + ne); multi when it holds other values too.
	around      *[2]string
	aroundMulti bool
	checks      []check
	heredoc     *syntax.Redirect // the here-document whose body holds the value
	info        *scriptInfo
	// afterSign: the value follows +, - or : in arithmetic, where a signed integer would
	// make ++, -- or ${x:-...}; a space keeps the sign the value's own.
	afterSign bool
}

type checkKind int

const (
	mustInteger    checkKind = iota // bash evaluates the text as arithmetic
	mustName                        // bash takes the text as a variable name (and evaluates a[...] in it)
	mustNotOption                   // a leading - would make it an option of the command
	mustNotBuiltin                  // the command name: a builtin would read the other arguments its way
	mustNotParen                    // declare reads "(...)" as an array assignment and expands it again
	mustNotTestV                    // test's -v makes the next argument a variable name
)

// check is one requirement on a value; where names the construct, for the message.
type check struct {
	kind  checkKind
	where string
	// around is the literal text of the word before and after the value: for mustNotBuiltin
	// the rest of the command name, for mustName the rest of the variable name.
	around [2]string
	// computed (mustName): bash builds the name from the value and text it expands, or from
	// several values, so it is only known when the command runs.
	computed bool
}

var integerLit = pattern.New(`^[+-]?[0-9]+$`)

func (k check) check(s slot, info *scriptInfo) error {
	v, ref := s.value, "${{"+s.name+"}}"
	name := k.around[0] + v + k.around[1]
	switch {
	case k.kind == mustName && envVarName.MatchString(v) && k.computed:
		return fmt.Errorf("%s is part of a variable name (%s) that bash puts together when it runs, so Hangar cannot tell which variable it names; use the value alone as the name", ref, k.where)
	case k.kind == mustName && envVarName.MatchString(v) && StartupVar(name) != "":
		return fmt.Errorf("%s is used as a variable name (%s), but %s is a variable whose value is code (%s); got %s", ref, k.where, name, StartupVar(name), Quote(v))
	case k.kind == mustName && envVarName.MatchString(v) && info.intReason(name) != "":
		return fmt.Errorf("%s is used as a variable name (%s), but %s may have the integer attribute (or be a name reference), so bash would evaluate what is assigned to it; got %s", ref, k.where, name, Quote(v))
	case k.kind == mustInteger && !integerLit.MatchString(v):
		return fmt.Errorf("%s is used in bash arithmetic (%s), so its value must be an integer; got %s", ref, k.where, Quote(v))
	case k.kind == mustName && !envVarName.MatchString(v):
		return fmt.Errorf("%s is used as a variable name (%s), so its value must be a name of letters, digits and _ not starting with a digit; got %s", ref, k.where, Quote(v))
	case k.kind == mustNotOption && strings.HasPrefix(v, "-"):
		return fmt.Errorf("%s is where %s reads its options, so its value must not start with -; got %s", ref, k.where, Quote(v))
	case k.kind == mustNotBuiltin && readsArgs(k.around[0]+v+k.around[1]):
		return fmt.Errorf("%s is the command name, so its value must not make it the bash builtin %s, which reads its arguments as code or variable names; got %s",
			ref, k.around[0]+v+k.around[1], Quote(v))
	case k.kind == mustNotParen && strings.HasPrefix(v, "("):
		return fmt.Errorf("%s is assigned by %s, which reads a value starting with ( as an array assignment and expands it again; got %s", ref, k.where, Quote(v))
	case k.kind == mustNotTestV && v == "-v":
		return fmt.Errorf("%s is an argument of %s, where -v makes the next argument a variable name that bash evaluates; got \"-v\"", ref, k.where)
	}
	return nil
}

// Hints for values in code: where they can go instead.
const (
	hintVar = "assign it to a variable first (v=${{...}}) and use \"$v\" inside that code"
	hintArg = "pass it as an argument instead: bash -c '... \"$1\"' _ ${{...}}"
	hintEnv = "pass it as an argument or an environment variable instead"
)

// classifier walks the path from the file down to a placeholder's leaf.
type classifier struct {
	path        []syntax.Node
	s           slot
	info        *scriptInfo
	sp          spot
	hdocLiteral bool
	cmdName     *syntax.Word // the word naming the command, when the path goes through one
}

// classify decides how the value of s is written, or why it cannot be.
func classify(p []syntax.Node, text string, s slot, info *scriptInfo) (*spot, error) {
	c := &classifier{path: p, s: s, info: info, sp: spot{info: info}}
	for i := 0; i < len(p)-1; i++ {
		if err := c.visit(i); err != nil {
			return nil, err
		}
	}
	if err := c.leaf(); err != nil {
		return nil, err
	}
	c.sp.afterSign = s.start > 0 && strings.IndexByte("+-:", text[s.start-1]) >= 0
	return &c.sp, nil
}

func (c *classifier) add(kind checkKind, where string) {
	k := check{kind: kind, where: where}
	if kind == mustName {
		k.around, k.computed = c.nameAround() // shell_startup.go
	}
	c.sp.checks = append(c.sp.checks, k)
}

func (c *classifier) code(where, hint string) error {
	return fmt.Errorf("${{%s}} is in text that bash runs as code (%s), so no value is safe there; %s",
		c.s.name, where, strings.ReplaceAll(hint, "${{...}}", "${{"+c.s.name+"}}"))
}

func (c *classifier) refuse(format string) error {
	return fmt.Errorf(format, c.s.name)
}

// visit applies what path[i] means for the placeholder below it.
func (c *classifier) visit(i int) error {
	child := c.path[i+1]
	switch n := c.path[i].(type) {
	case *syntax.ArithmExp:
		c.add(mustInteger, map[bool]string{true: "$[ ]", false: "$(( ))"}[n.Bracket])
	case *syntax.ArithmCmd:
		c.add(mustInteger, "an (( )) command")
	case *syntax.LetClause:
		c.add(mustInteger, "let")
	case *syntax.CStyleLoop:
		c.add(mustInteger, "for (( ))")
	case *syntax.ArrayElem:
		if same(child, n.Index) {
			c.add(mustInteger, "an array subscript")
		}
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			c.add(mustInteger, "[[ "+n.Op.String()+" ]]")
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet {
			c.add(mustName, "[[ -v ]]")
		}
	case *syntax.ParamExp:
		return c.paramExp(n, child)
	case *syntax.CmdSubst:
		if n.Backquotes {
			return c.refuse("${{%s}} inside backquotes is not supported; use $( ) instead")
		}
	case *syntax.ExtGlob:
		return c.refuse("${{%s}} inside an extended glob pattern is not supported")
	case *syntax.FuncDecl:
		if same(child, n.Name) {
			return c.refuse("${{%s}} as a function name is not supported")
		}
	case *syntax.CoprocClause:
		if same(child, n.Name) {
			c.add(mustName, "coproc")
		}
	case *syntax.WordIter:
		return c.wordIter(n, i)
	case *syntax.Redirect:
		return c.redirect(n, i)
	case *syntax.BinaryCmd:
		if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && same(child, n.X) {
			if name, ok := c.info.stdinScript(receiver(n.Y)); ok {
				return c.code("piped into "+name, hintEnv)
			}
		}
	case *syntax.CallExpr:
		if w, ok := child.(*syntax.Word); ok {
			return c.callArg(n, w, i)
		}
	case *syntax.Assign:
		return c.assign(n, i)
	case *syntax.Stmt:
		if name := c.info.storesStartup(n); name != "" {
			return c.startup(name, StartupVar(name))
		}
	}
	return nil
}

func same(child syntax.Node, n syntax.Node) bool {
	return n != nil && child == n
}

// paramExp takes integers as subscripts and offsets (arithmetic), and refuses values
// elsewhere inside ${...} (quoting rules there differ by operator) and right after a $.
func (c *classifier) paramExp(n *syntax.ParamExp, child syntax.Node) error {
	if n.Short && n.Param != nil && same(child, n.Param) {
		from := int(n.Param.Pos().Offset())
		if c.s.start == from {
			return c.refuse("${{%s}} directly after $ is not supported")
		}
		name := c.info.text[from:c.s.start]
		return fmt.Errorf("${{%s}} right after $%s would be read as part of that variable's name; write ${%s}${{%s}}",
			c.s.name, name, name, c.s.name)
	}
	switch {
	case same(child, n.Index):
		c.add(mustInteger, "an array subscript")
		return nil
	case n.Slice != nil && (same(child, n.Slice.Offset) || same(child, n.Slice.Length)):
		c.add(mustInteger, "${x:offset:length}")
		return nil
	}
	return c.refuse("${{%s}} inside ${...} is not supported")
}

func (c *classifier) wordIter(n *syntax.WordIter, i int) error {
	if why := StartupVar(n.Name.Value); why != "" && !same(c.path[i+1], n.Name) {
		return c.startup(n.Name.Value, why)
	}
	if same(c.path[i+1], n.Name) {
		what := "a for loop variable"
		if f, ok := c.path[i-1].(*syntax.ForClause); ok && f.Select {
			what = "a select variable"
		}
		c.add(mustName, what)
		return nil
	}
	if r := c.info.intReason(n.Name.Value); r != "" {
		c.add(mustInteger, strings.Replace(r, "an assignment to", "a loop over", 1))
	}
	return nil
}

// redirect handles here-documents (body, delimiter) and descriptor variables ({fd}>).
func (c *classifier) redirect(n *syntax.Redirect, i int) error {
	child := c.path[i+1]
	if same(child, n.N) {
		return c.refuse("${{%s}} in a file descriptor variable ({name}>) is not supported")
	}
	stmt, _ := c.path[i-1].(*syntax.Stmt)
	switch n.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if same(child, n.Word) {
			return c.refuse("${{%s}} in a here-document delimiter is not supported")
		}
		if len(c.path) != i+3 { // bash finds the body's end by lines, before parsing it
			return c.refuse("${{%s}} nested inside a here-document is not supported")
		}
		c.sp.heredoc = n
		c.hdocLiteral = quotedDelimiter(n.Word)
	case syntax.WordHdoc:
	default:
		return nil
	}
	if name, ok := c.info.stdinScript(stmt); ok {
		return c.code("a script that "+name+" reads from its input", hintEnv)
	}
	return nil
}

// quotedDelimiter reports whether a here-document's delimiter is quoted, which makes the
// body literal.
func quotedDelimiter(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); !ok || strings.Contains(l.Value, `\`) {
			return true
		}
	}
	return false
}

// receiver is the statement that reads a pipe's output: the first of a pipeline.
func receiver(s *syntax.Stmt) *syntax.Stmt {
	for s != nil {
		b, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
			return s
		}
		s = b.X
	}
	return s
}

// callArg handles a value in the word w of a simple command.
func (c *classifier) callArg(n *syntax.CallExpr, w *syntax.Word, i int) error {
	k := 0
	for k < len(n.Args) && n.Args[k] != w {
		k++
	}
	cw := c.info.commandWord(n.Args)
	switch {
	case k < cw.idx || cw.lookupOnly: // exec -a's name, command -v's names
		return nil
	case k == cw.idx:
		c.cmdName = w
		nb := check{kind: mustNotBuiltin}
		before, ok1 := c.info.prefix(w, c.s.start)
		after, ok2 := c.info.suffix(w, c.s.end)
		if ok1 && ok2 {
			nb.around = [2]string{before, after}
		}
		c.sp.checks = append(c.sp.checks, nb)
		return nil
	}
	if err := c.startupArg(w); err != nil { // shell_startup.go
		return err
	}
	return c.argUse(cw.name, n.Args[cw.idx+1:], k-cw.idx-1, i)
}

// argUse decides what the j-th argument of the command name is to bash.
func (c *classifier) argUse(name string, args []*syntax.Word, j, i int) error {
	switch {
	case codeBuiltins[name]:
		return c.code(name, hintVar)
	case name == "let":
		c.add(mustInteger, "let")
	case declBuiltins[name]:
		return c.declWord(name, declFlagsOf(c.info, args), args[j])
	case shellNames[lastElem(name)]:
		return c.shellArg(name, args, j, i)
	case lastElem(name) == "env":
		return c.envArg(args, j)
	case name == "source" || name == ".":
		if c.throughProcSubst(i) {
			return c.code("a script that "+name+" reads", hintEnv)
		}
	case name == "test" || name == "[":
		if t, ok := c.info.lit(argAt(args, j-1)); ok && t == "-v" {
			c.add(mustName, name+" -v")
		} else {
			c.add(mustNotTestV, name)
		}
	default:
		if spec, ok := optionBuiltins[name]; ok {
			return c.optionArg(name, spec, args, j)
		}
	}
	return nil
}

func argAt(args []*syntax.Word, j int) *syntax.Word {
	if j < 0 || j >= len(args) {
		return nil
	}
	return args[j]
}

func (c *classifier) throughProcSubst(i int) bool {
	for _, n := range c.path[i+1:] {
		if _, ok := n.(*syntax.ProcSubst); ok {
			return true
		}
	}
	return false
}

// inOption refuses a value glued to an option word (-p${{x}}).
func (c *classifier) inOption(name string, w *syntax.Word) error {
	if p, ok := c.info.prefix(w, c.s.start); ok && (strings.HasPrefix(p, "-") || strings.HasPrefix(p, "+")) {
		return fmt.Errorf("${{%s}} in an option of %s is not supported", c.s.name, name)
	}
	return nil
}

// shellArg handles arguments of sh/bash/...: the script after -c is code, and so is a
// script read from a process substitution.
func (c *classifier) shellArg(name string, args []*syntax.Word, j, i int) error {
	role, hasC := c.info.shellRole(args, j)
	switch role {
	case roleOther:
		return nil
	case roleScriptAtOptions:
		if err := c.inOption(name, args[j]); err != nil {
			return err
		}
		c.add(mustNotOption, name)
	}
	if hasC {
		return c.code(name+" -c", hintArg)
	}
	if c.throughProcSubst(i) {
		return c.code("a script that "+name+" reads", hintEnv)
	}
	return nil
}

// optionArg handles builtins whose options or arguments name variables (read, printf -v, ...).
func (c *classifier) optionArg(name string, spec optionSpec, args []*syntax.Word, j int) error {
	inOpts, pos := true, 0
	for a := 0; a < len(args); a++ {
		t, ok := c.info.lit(args[a])
		if inOpts && a == j {
			if err := c.inOption(name, args[a]); err != nil {
				return err
			}
			c.add(mustNotOption, name)
		}
		if inOpts && ok && t == "--" {
			inOpts = false
			continue
		}
		if inOpts && ok && len(t) > 1 && t[0] == '-' {
			if letter, takes := spec.operandOf(t); takes {
				if a++; a == j {
					return c.operand(name, spec, letter)
				}
			}
			continue
		}
		inOpts = false
		if a == j {
			c.rest(name, spec, pos)
			return nil
		}
		pos++
	}
	return nil
}

func (c *classifier) operand(name string, spec optionSpec, letter byte) error {
	switch {
	case strings.IndexByte(spec.names, letter) >= 0:
		c.add(mustName, name+" -"+string(letter))
	case strings.IndexByte(spec.code, letter) >= 0:
		return c.code(name+" -"+string(letter), hintVar)
	}
	return nil
}

// rest handles the pos-th argument after the options.
func (c *classifier) rest(name string, spec optionSpec, pos int) {
	switch spec.rest[min(pos, len(spec.rest)-1)] {
	case 'n':
		c.add(mustName, name)
	case 'o':
		c.add(mustNotOption, name)
	}
}

// leaf decides the quoting from the leaf that holds the placeholder.
func (c *classifier) leaf() error {
	n := len(c.path)
	switch l := c.path[n-1].(type) {
	case *syntax.Comment:
		c.sp.quoting = inComment
		return nil
	case *syntax.SglQuoted:
		if !l.Dollar {
			c.sp.quoting = inSingle
			return nil
		}
		c.sp.quoting = inANSI
		return c.noBackslash(int(l.Pos().Offset()))
	}
	lit := c.path[n-1].(*syntax.Lit)
	switch parent := c.path[n-2].(type) {
	case *syntax.DblQuoted:
		c.sp.quoting = inDouble
	case *syntax.Word:
		c.word(parent, lit, n)
	default:
		c.sp.quoting = inRaw
		for _, k := range c.sp.checks {
			if k.kind == mustName || k.kind == mustInteger {
				return nil
			}
		}
		return c.refuse("${{%s}} is where Hangar cannot tell how bash reads it; move it into a plain argument")
	}
	if c.sp.quoting == inLiteralHeredoc {
		return nil
	}
	return c.noBackslash(int(lit.Pos().Offset()))
}

// word sets the quoting for a value in a literal part of a word.
func (c *classifier) word(w *syntax.Word, lit *syntax.Lit, n int) {
	if c.sp.heredoc != nil && c.sp.heredoc.Hdoc == w {
		c.sp.quoting = inHeredoc
		if c.hdocLiteral {
			c.sp.quoting = inLiteralHeredoc
		}
		return
	}
	c.sp.quoting = inWord
	switch g := c.path[n-3].(type) {
	case *syntax.CallExpr:
		c.sp.strict = w == c.cmdName || len(g.Args) > 0 && g.Args[0] == w
	case *syntax.TestClause, *syntax.BinaryTest, *syntax.UnaryTest, *syntax.ParenTest:
		c.sp.strict = true
	case *syntax.Assign:
		c.sp.strict = g.Naked
	}
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "{~") {
			c.sp.strict = true
		}
	}
	if len(w.Parts) == 1 && isLowerWord(c.info.placeholders.ReplaceAllString(lit.Value, "")) {
		from := int(lit.Pos().Offset())
		before, after := c.info.text[from:c.s.start], c.info.text[c.s.end:int(lit.End().Offset())]
		c.sp.around = &[2]string{before, after}
		c.sp.aroundMulti = c.info.placeholders.MatchString(before + after)
	}
}

// noBackslash refuses a value right after an unescaped backslash, which would escape
// its first character.
func (c *classifier) noBackslash(from int) error {
	n := 0
	for i := c.s.start - 1; i >= from && c.info.text[i] == '\\'; i-- {
		n++
	}
	if n%2 == 1 {
		return c.refuse("${{%s}} directly after a backslash is not supported")
	}
	return nil
}
