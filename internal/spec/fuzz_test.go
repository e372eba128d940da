package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseJob: no input panics, every failure is an ErrorList naming the file, and
// every accepted spec encodes as JSON and binds with the values it declares.
func FuzzParseJob(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.txtar")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		a := parseArchive(string(data))
		args, _ := a.get("args")
		if yml, ok := a.get("job.yml"); ok {
			f.Add([]byte(yml), strings.TrimSpace(args))
		}
	}
	f.Add([]byte("command: echo ${{inputs.x}}\ninputs: {x: 1}\n"), "inputs.x=2")
	f.Add([]byte("a: &a [*a]\n"), "")
	f.Add([]byte("command: x\nresources: {<<: {instance_count: 2}}\n"), "resources.instance_count=3")
	f.Add([]byte("type: pipeline\ninputs: {n: 1, d: {path: ./data}}\noutputs: {o: }\njobs:\n  a: {command: 'echo ${{inputs.n}} > ${{outputs.x}}', inputs: {n: '${{parent.inputs.n}}'}, outputs: {x: '${{parent.outputs.o}}'}}\n  b: {component: ./c.yml, inputs: {d: '${{parent.jobs.a.outputs.x}}', k: '${{parent.inputs.n}}'}}\n"), "settings.default_compute=local")
	f.Add([]byte("type: pipeline\njobs:\n  p: {type: pipeline, component: ./p.yml, inputs: {d: {path: ./data}}}\n  r: {component: 'azureml:c@latest', inputs: {d: '${{parent.jobs.p.outputs.o}}'}}\n"), "")
	dir := writeTree(f, map[string]string{"data/x.csv": "1", "src/": "", "conda.yml": "dependencies: []\n",
		"c.yml": "name: c\ninputs: {d: {type: uri_folder}, k: {type: integer, default: 1, max: 9}, o: {type: string, optional: true}}\noutputs: {o: }\ncommand: cat ${{inputs.d}} $[[${{inputs.o}}]] ${{inputs.k}} > ${{outputs.o}}\n",
		"p.yml": "type: pipeline\nname: p\ninputs: {d: {type: uri_folder}}\noutputs: {o: }\njobs:\n  one: {component: ./c.yml, inputs: {d: '${{parent.inputs.d}}'}, outputs: {o: '${{parent.outputs.o}}'}}\n"})
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = strings.Split(set, "\n")
		}
		s, _, err := ParseJob("job.yml", data, dir, sets)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %T %v", err, err)
			}
			for _, e := range list {
				if e.File != "job.yml" || e.Msg == "" {
					t.Fatalf("bad error %#v", e)
				}
			}
			return
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("spec does not encode: %v", err)
		}
		if _, err := Bind(s.Command, BindValues(s)); err != nil {
			t.Fatalf("accepted command does not bind: %v", err)
		}
		if s.Pipeline != nil {
			for name, st := range s.Pipeline.Steps {
				if _, err := Bind(st.Spec.Command, BindValues(&st.Spec)); err != nil && !Registered(st) && st.Spec.Sweep == nil {
					t.Fatalf("accepted step %s does not bind: %v", name, err)
				}
			}
		}
	})
}

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
