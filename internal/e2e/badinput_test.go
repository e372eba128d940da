package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

// Bad input is refused before anything is created, with the file, the field path and what was expected.
func TestBadInputIsRefusedWithFieldPath(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"data/x.csv": "a,b\n", "src/train.py": "print(1)\n"})
	tests := []struct {
		name string
		yaml string
		sets []string
		want []string // substrings of stderr
	}{
		{"malformed YAML", "command: [echo\n", nil, []string{"job.yml", "malformed YAML"}},
		{"unknown top-level field", "command: echo\ncommnd: echo\n", nil, []string{"job.yml", "commnd", "unknown field", `did you mean "command"`}},
		{"wrong type", "command: echo\nlimits:\n  timeout: ten\n", nil, []string{"job.yml", "limits.timeout", "expected"}},
		{"missing command", "code: src\n", nil, []string{"job.yml", "command", "required"}},
		{"unknown compute", "command: echo\ncompute: azureml:gpu-cluster\n", nil, []string{"job.yml", "compute", "gpu-cluster"}},
		{"missing input path", "command: cat ${{inputs.d}}\ninputs:\n  d: {type: uri_file, path: data/missing.csv}\n", nil,
			[]string{"job.yml", "inputs.d.path", "does not exist"}},
		{"set on a key the schema lacks", "command: echo ${{inputs.lr}}\nresources:\n  instance_count: 1\ninputs:\n  lr: 0.1\n", []string{"resources.instance_cont=1"},
			[]string{"job.yml", "resources.instance_cont", "no such key", `did you mean "instance_count"`}},
		{"set with the wrong type", "command: echo ${{inputs.lr}}\ninputs:\n  lr: 0.1\n", []string{"inputs.lr=abc"},
			[]string{`job.yml: inputs.lr: expected number, got "abc"`}},
		{"undeclared input in command", "command: echo ${{inputs.lr}}\n", nil, []string{"job.yml", "command", "inputs.lr"}},
		{"value bash would evaluate (issue 10)", "command: echo $(( ${{inputs.n}} + 1 ))\ninputs:\n  n: '1'\n", []string{"inputs.n=a[$(touch x)]"},
			[]string{`job.yml: command: ${{inputs.n}} is used in bash arithmetic ($(( ))), so its value must be an integer; got "a[$(touch x)]"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, "job.yml")
			writeFiles(t, dir, map[string]string{"job.yml": tt.yaml})
			args := []string{"job", "create", "-f", file}
			for _, s := range tt.sets {
				args = append(args, "--set", s)
			}
			r := w.run(args...)
			if r.code == 0 {
				t.Fatalf("exit 0, want an error\nstdout: %s", r.stdout)
			}
			for _, want := range tt.want {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
		})
	}
	var list []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("refused jobs created %d runs", len(list))
	}
}

// Usage mistakes exit 2.
func TestUsageErrors(t *testing.T) {
	w := newWS(t)
	for _, args := range [][]string{
		{"job", "create"},
		{"job", "show"},
		{"job", "list", "--bogus"},
		{"compute", "list", "-o", "xml"},
	} {
		if r := w.run(args...); r.code != 2 {
			t.Errorf("hangar %v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
	if r := w.run("job", "show", "-n", "no_such_job"); r.code != 1 || !strings.Contains(r.stderr, "no_such_job") {
		t.Errorf("show of a missing job: exit %d, stderr %q", r.code, r.stderr)
	}
}
