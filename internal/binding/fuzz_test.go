package binding

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// wordTemplates put one value in one shell word, in each quoting context.
var wordTemplates = []struct{ command, pre, post string }{
	{"echo ${{inputs.x}}", "", ""},
	{`echo "${{inputs.x}}"`, "", ""},
	{"echo '${{inputs.x}}'", "", ""},
	{"echo a${{inputs.x}}b", "a", "b"},
	{`echo "a ${{inputs.x}} b"`, "a ", " b"},
	{"echo $[[${{inputs.x}}]]", "", ""},
}

// FuzzBind: no input panics, and a bound value always stays one intact shell word.
func FuzzBind(f *testing.F) {
	for _, v := range nastyValues {
		f.Add("echo ${{inputs.x}} $[[--y ${{outputs.y}}]]", v)
	}
	f.Add("cat <<EOF\n${{inputs.x}}\nEOF\n", "EOF")
	// start-up variables (issue 27): each form that puts a value in one
	for _, c := range []string{"BASH_ENV=${{inputs.x}} bash x.sh", "export BASH_ENV=${{inputs.x}}", "env BASH_ENV=${{inputs.x}} bash",
		"declare -x ENV=${{inputs.x}}", "readonly LD_PRELOAD=${{inputs.x}}", "f() { local PS4=${{inputs.x}}; }",
		"env ${{inputs.x}} bash", "sudo LD_PRELOAD=${{inputs.x}} cmd", "read BASH_ENV <<< ${{inputs.x}}", "export BASH_${{inputs.x}}=x"} {
		f.Add(c, "$(id > /tmp/id_out)")
		f.Add(c, "ENV")
	}
	f.Add(`echo "$(cat ${{inputs.x}})" # ${{inputs.x}}`, "a b")
	f.Fuzz(func(t *testing.T, command, value string) {
		_, _ = Bind(command, map[string]string{"inputs.x": value, "outputs.y": value})
		_ = References(command)
		if strings.ContainsRune(value, 0) {
			return
		}
		for _, tpl := range wordTemplates {
			bound, err := Bind(tpl.command, map[string]string{"inputs.x": value})
			var se *startupError
			if err != nil && errors.As(err, &se) && spellsStartup(tpl.pre+value) {
				continue // NAME=... for a start-up variable: refused in every argument (issue 27)
			}
			if err != nil {
				t.Fatalf("Bind(%q): %v", tpl.command, err)
			}
			words, err := shellWords(bound)
			if err != nil {
				t.Fatalf("%q: %v", bound, err)
			}
			if want := []string{"echo", tpl.pre + value + tpl.post}; len(words) != 2 || words[1] != want[1] {
				t.Fatalf("%q splits into %q, want %q", bound, words, want)
			}
		}
	})
}

// shellWords splits a simple command like bash would, and refuses anything that bash
// would expand, glob or treat as an operator outside quotes.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '\\':
			if i+1 >= len(s) || s[i+1] == '\n' {
				return nil, fmt.Errorf("dangling backslash at %d", i)
			}
			cur.WriteByte(s[i+1])
			i, inWord = i+1, true
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ' at %d", i)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i, inWord = i+1+end, true
		case c == '"':
			n, err := doubleQuoted(s[i+1:], &cur)
			if err != nil {
				return nil, err
			}
			i, inWord = i+1+n, true
		case strings.IndexByte("\n$`*?[{~;&|<>()#", c) >= 0:
			return nil, fmt.Errorf("unquoted %q at %d", c, i)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// doubleQuoted reads up to the closing quote and returns the bytes used.
func doubleQuoted(s string, cur *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0:
			cur.WriteByte(s[i+1])
			i++
		case c == '$' || c == '`':
			return 0, fmt.Errorf("expansion %q inside double quotes", c)
		default:
			cur.WriteByte(c)
		}
	}
	return 0, errors.New("unterminated \"")
}
