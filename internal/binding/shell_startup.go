package binding

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Some variables are read by a program as it starts, and what they hold is run, or names code
// that is loaded: bash expands BASH_ENV and runs the file it names, the dynamic loader loads
// LD_PRELOAD into every program. A value bound into one of them is code however well it is
// quoted, so binding refuses it there (issue 27). The rule for the list: a variable whose value
// a program executes, or loads code from, when it starts, without the command naming that code.
// PATH is not on it: it is read when the command names a program, and a value in it only picks
// among programs the command names. PS3 is not either: bash prints it without expanding it.

// startupReader is one variable (or, with prefix, a family of them) and who runs what it holds.
type startupReader struct {
	name   string
	prefix bool
	why    string
}

var startupReaders = []startupReader{
	{name: "BASH_ENV", why: "bash expands it and runs the file it names when a script starts"},
	{name: "ENV", why: "sh, and bash in POSIX mode, expand it and run the file it names when they start"},
	{name: "PROMPT_COMMAND", why: "bash runs it before each prompt"},
	{name: "PS0", why: "bash expands it, command substitutions included, when it prints a prompt"},
	{name: "PS1", why: "bash expands it, command substitutions included, when it prints a prompt"},
	{name: "PS2", why: "bash expands it, command substitutions included, when it prints a prompt"},
	{name: "PS4", why: "bash expands it, command substitutions included, when it prints a trace under set -x"},
	{name: "SHELLOPTS", why: "bash turns on the options it lists (xtrace among them, which expands PS4) when it starts"},
	{name: "BASHOPTS", why: "bash turns on the shopt options it lists when it starts"},
	{name: "IFS", why: "it decides how bash splits every unquoted expansion after it, other values' included"},
	{name: "BASH_XTRACEFD", why: "bash sends its trace to the file descriptor it names"},
	{name: "BASH_FUNC_", prefix: true, why: "bash defines a function from it when it starts: an exported function"},
	{name: "LD_", prefix: true, why: "the dynamic loader reads it when any program starts; LD_PRELOAD, LD_AUDIT and LD_LIBRARY_PATH load code from the files they name"},
	{name: "GLIBC_TUNABLES", why: "the dynamic loader parses it when any program starts"},
	{name: "GCONV_PATH", why: "glibc loads character-set modules from the folders it names"},
	{name: "PYTHONSTARTUP", why: "Python runs the file it names when it starts interactively"},
	{name: "PYTHONPATH", why: "Python imports modules from it as it starts, sitecustomize among them"},
	{name: "PYTHONHOME", why: "Python loads its standard library and site from it as it starts"},
	{name: "PYTHONPLATLIBDIR", why: "Python loads its standard library from it as it starts"},
	{name: "PYTHONUSERBASE", why: "Python runs the .pth files and usercustomize it finds there as it starts"},
	{name: "PYTHONWARNINGS", why: "Python imports the warning categories it names as it starts"},
	{name: "PERL5OPT", why: "perl reads options from it as it starts, and -M loads a module"},
	{name: "PERL5LIB", why: "perl loads modules from the folders it names"},
	{name: "PERLLIB", why: "perl loads modules from the folders it names"},
	{name: "PERL5DB", why: "perl runs it as its debugger"},
	{name: "RUBYOPT", why: "ruby reads options from it as it starts, and -r loads a library"},
	{name: "RUBYLIB", why: "ruby loads libraries from the folders it names"},
	{name: "NODE_OPTIONS", why: "node reads options from it as it starts, and --require loads a module"},
	{name: "JAVA_TOOL_OPTIONS", why: "the JVM reads options from it as it starts, and -javaagent loads code"},
	{name: "_JAVA_OPTIONS", why: "the JVM reads options from it as it starts, and -javaagent loads code"},
	{name: "JDK_JAVA_OPTIONS", why: "the java launcher reads options from it as it starts, and -javaagent loads code"},
}

// StartupVar says why a value put in the environment variable name becomes code: who runs
// it, or loads code from it, when a program starts ("" for other variables). Hangar refuses
// such a value from ${{inputs.*}}, ${{outputs.*}} and ${{secrets.*}}.
func StartupVar(name string) string {
	for _, r := range startupReaders {
		if name == r.name || r.prefix && strings.HasPrefix(name, r.name) {
			return r.why
		}
	}
	return ""
}

// StartupVarNames lists the variables StartupVar knows, a family as its prefix and "*", for
// documentation and messages.
func StartupVarNames() []string {
	out := make([]string, 0, len(startupReaders))
	for _, r := range startupReaders {
		if r.prefix {
			out = append(out, r.name+"*")
		} else {
			out = append(out, r.name)
		}
	}
	return out
}

// startupSegment finds, in the text of one word, a NAME= whose NAME is a start-up variable
// and starts before end (where the value's bytes end), so that the value is in it or after
// it: every text before an "=", from the word's start or the previous "=", is taken as a
// NAME, since env, sudo, mpirun -x, docker -e and make put NAME=VALUE words in an
// environment, and --env=NAME=VALUE nests one. It returns the variable, or "".
func startupSegment(text string, end int) string {
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '=' {
			continue
		}
		if start < end && StartupVar(text[start:i]) != "" {
			return text[start:i]
		}
		start = i + 1
	}
	return ""
}

// startupError refuses a value that would be put in a start-up variable.
type startupError struct{ msg string }

func (e *startupError) Error() string { return e.msg }

// startup is the error for a value that would be put in the start-up variable name.
func (c *classifier) startup(name, why string) error {
	return &startupError{fmt.Sprintf("${{%s}} would be put in %s, a variable whose value is code (%s), so no value is safe there; pass it another way, as an argument or in a variable of another name",
		c.s.name, name, why)}
}

// nameAround is the literal text before and after the value in the variable name that holds
// it (the name ends at =, [ or +=), and whether bash puts that name together at run time
// (from expansions, or from several values).
func (c *classifier) nameAround() ([2]string, bool) {
	var before, after string
	known := true
	if w := c.enclosingWord(); w != nil {
		var ok1, ok2 bool
		before, ok1 = c.info.prefix(w, c.s.start)
		after, ok2 = c.info.suffix(w, c.s.end)
		known = ok1 && ok2
		if i := strings.IndexAny(after, "=[+"); i >= 0 {
			after, known = after[:i], ok1
		}
	} else if lit, ok := c.path[len(c.path)-1].(*syntax.Lit); ok {
		from, to := int(lit.Pos().Offset()), int(lit.End().Offset())
		before, after = c.info.text[from:c.s.start], c.info.text[c.s.end:to]
		if i := strings.IndexAny(after, "=[+"); i >= 0 {
			after = after[:i]
		}
		known = !c.info.placeholders.MatchString(before + after)
	}
	return [2]string{before, after}, !known
}

// enclosingWord is the innermost word on the path to the value, or nil.
func (c *classifier) enclosingWord() *syntax.Word {
	for i := len(c.path) - 1; i >= 0; i-- {
		if w, ok := c.path[i].(*syntax.Word); ok {
			return w
		}
	}
	return nil
}

// startupArg refuses a value in a command's argument that reads as NAME=VALUE for a start-up
// variable NAME, the value in the NAME or after it (see startupSegment).
func (c *classifier) startupArg(w *syntax.Word) error {
	before, ok := c.info.prefix(w, c.s.start)
	text, end := before, len(before)
	if ok {
		after, _ := c.info.suffix(w, c.s.end)
		text, end = before+c.s.value+after, len(before)+len(c.s.value)
	}
	if name := startupSegment(text, end); name != "" {
		return c.startup(name, StartupVar(name))
	}
	return nil
}

// envArg handles a value in the j-th argument of env. Before its command, env reads options
// (a value must not start with -: env -S splits its operand into a command line) and NAME=VALUE
// words, whose NAME must be one Hangar can read (startupArg checks it).
func (c *classifier) envArg(args []*syntax.Word, j int) error {
	inOpts := true
	for a := 0; a < j; a++ {
		t, ok := c.info.lit(args[a])
		switch {
		case !ok: // computed: an option, a NAME=VALUE or the command; assume the most
		case inOpts && t == "--":
			inOpts = false
		case inOpts && len(t) > 1 && t[0] == '-':
			if envOperand(t) != 0 && a+1 == j {
				if envOperand(t) == 'S' {
					return c.code("env -S, which splits it into a command to run", hintArg)
				}
				return nil // -u NAME, -C DIR
			}
			if envOperand(t) != 0 {
				a++
			}
		case strings.Contains(t, "="):
			inOpts = false
		default:
			return nil // the command's own arguments
		}
	}
	w := args[j]
	before, ok1 := c.info.prefix(w, c.s.start)
	if inOpts {
		if err := c.inOption("env", w); err != nil {
			return err
		}
		if ok1 && before == "" {
			c.add(mustNotOption, "env")
		}
	}
	_, ok2 := c.info.suffix(w, c.s.end)
	raw := c.info.text[int(w.Pos().Offset()):int(w.End().Offset())]
	if !(ok1 && ok2) && strings.Contains(c.info.placeholders.ReplaceAllString(raw, "")+c.s.value, "=") {
		return fmt.Errorf("${{%s}} is in an argument of env that bash puts together when it runs, so Hangar cannot tell which variable it sets; write NAME=${{%s}} with the name in the command", c.s.name, c.s.name)
	}
	return nil
}

// envOperand is the option letter of env's option word t that takes the next argument as its
// operand (u, C or S), or 0.
func envOperand(t string) byte {
	switch t {
	case "--unset":
		return 'u'
	case "--chdir":
		return 'C'
	case "--split-string":
		return 'S'
	}
	if strings.HasPrefix(t, "--") {
		return 0
	}
	for i := 1; i < len(t); i++ {
		if strings.IndexByte("uCS", t[i]) >= 0 {
			if i == len(t)-1 {
				return t[i]
			}
			return 0 // the operand is the rest of the word
		}
	}
	return 0
}

// storesStartup reports the start-up variable a statement stores its input or arguments in
// (read NAME, mapfile NAME, printf -v NAME), or "".
func (in *scriptInfo) storesStartup(s *syntax.Stmt) string {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return ""
	}
	cw := in.commandWord(call.Args)
	spec, ok := optionBuiltins[cw.name]
	if !ok || cw.lookupOnly || !(cw.name == "read" || cw.name == "mapfile" || cw.name == "readarray" || cw.name == "printf") {
		return ""
	}
	for _, name := range in.nameArgs(spec, call.Args[cw.idx+1:]) {
		if StartupVar(name) != "" {
			return name
		}
	}
	return ""
}

// nameArgs lists the literal variable names among a builtin's arguments (see optionSpec).
func (in *scriptInfo) nameArgs(spec optionSpec, args []*syntax.Word) []string {
	var names []string
	inOpts, pos := true, 0
	for a := 0; a < len(args); a++ {
		t, ok := in.lit(args[a])
		switch {
		case inOpts && ok && t == "--":
			inOpts = false
		case inOpts && ok && len(t) > 1 && t[0] == '-':
			letter, next := spec.operandOf(t)
			if next && a+1 < len(args) {
				a++
				if n, ok := in.lit(args[a]); ok && strings.IndexByte(spec.names, letter) >= 0 {
					names = append(names, n)
				}
			}
		default:
			inOpts = false
			if ok && spec.rest[min(pos, len(spec.rest)-1)] == 'n' {
				names = append(names, t)
			}
			pos++
		}
	}
	return names
}
