package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/binding"
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
		if _, err := binding.Bind(s.Command, BindValues(s)); err != nil {
			t.Fatalf("accepted command does not bind: %v", err)
		}
		if s.Pipeline != nil {
			for name, st := range s.Pipeline.Steps {
				if _, err := binding.Bind(st.Spec.Command, BindValues(&st.Spec)); err != nil && !Registered(st) && st.Spec.Sweep == nil {
					t.Fatalf("accepted step %s does not bind: %v", name, err)
				}
			}
		}
	})
}
