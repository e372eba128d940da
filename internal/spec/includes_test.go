package spec

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// A command component's additional_includes, as Azure's component_additional_includes.yml
// writes them: each a file or folder relative to the component file, returned absolute for the
// CLI to add at the root of the code snapshot. What Azure refuses is refused naming the file and
// the entry: a path that does not exist, a name the code already has, two entries of one name;
// and what a spec may not read: a path outside its folder, unless --spec-root allows it.
func TestAdditionalIncludes(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"component_src/component.py": "print(1)\n",
		"common_src/helper.py":       "x = 1\n",
		"conf.yml":                   "a: 1\n",
		"other/component.py":         "clash\n",
		"../outside/lib.py":          "outside\n",
	})
	write := func(name, includes string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, "name: c\ntype: command\ncode: ./component_src\ncommand: python component.py\nadditional_includes:\n"+includes)
		return p
	}
	c, _, err := ParseComponentFile(write("ok.yml", "  - common_src\n  - ./conf.yml\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "common_src"), filepath.Join(dir, "conf.yml")}
	if diff := cmp.Diff(want, c.Job.AdditionalIncludes); diff != "" {
		t.Errorf("includes (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ includes, want string }{
		{"  - nope\n", "bad.yml: additional_includes[0]: nope does not exist (line 6)"},
		{"  - other/component.py\n", "bad.yml: additional_includes[0]: the code " + filepath.Join(dir, "component_src") + " already has component.py at its root (line 6)"},
		{"  - common_src\n  - ./common_src/\n", "bad.yml: additional_includes[1]: common_src and ./common_src/ would both be common_src at the root of the code snapshot (line 7)"},
		{"  - ../outside/lib.py\n", "bad.yml: additional_includes[0]: ../outside/lib.py is outside " + realDir(dir) + ", the folder of bad.yml, and not a file the spec's git repository tracks: a spec reads files only there, so that a spec from elsewhere cannot publish your files to the workspace; allow a wider folder with --spec-root DIR (line 6)"},
		{"  - {type: artifact, feed: f, name: n, version: '1'}\n", "bad.yml: additional_includes[0]: Azure DevOps artifacts are not supported"},
		{"  - azureml://datastores/x/paths/y\n", `bad.yml: additional_includes[0]: expected a local file or folder, got URI "azureml://datastores/x/paths/y"`},
		{"  common_src\n", "bad.yml: additional_includes: expected a list of files and folders"},
	} {
		_, _, err := ParseComponentFile(write("bad.yml", tt.includes), nil)
		checkErr(t, err, tt.want)
	}
	if c, _, err := ParseComponentFile(write("wide.yml", "  - ../outside/lib.py\n"), nil, Root(filepath.Dir(dir))); err != nil || len(c.Job.AdditionalIncludes) != 1 {
		t.Errorf("an include under --spec-root: %+v, %v", c, err)
	}

	// In a pipeline, a step's component file brings its includes, relative to its own folder.
	s, _, _, err := parseJob(t, "type: pipeline\njobs:\n  a: {component: comp/c.yml}\n", map[string]string{
		"comp/c.yml":    "name: c\ncommand: python x.py\ncode: src\nadditional_includes: [../lib]\n",
		"comp/src/x.py": "", "lib/util.py": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Pipeline.Steps["a"].Spec.AdditionalIncludes; len(got) != 1 || filepath.Base(got[0]) != "lib" {
		t.Errorf("the step's includes = %v", got)
	}
	_, _, _, err = parseJob(t, "type: pipeline\njobs:\n  a: {component: p.yml}\n", map[string]string{
		"p.yml": "type: pipeline\nadditional_includes: [lib]\njobs:\n  x: {command: echo}\n", "lib/": "",
	})
	checkErr(t, err, "p.yml: additional_includes: a command component's field")
}

// Azure's first component schema (sdk-2-0) gives data as `type: path`, and its code as a single
// file (code: ./train.py, the responsible AI examples): the input is a uri_folder, or a uri_file
// when what it names is a file; the output a uri_folder; the code the file, with a warning to
// write today's types.
func TestLegacyPathTypeAndCodeFile(t *testing.T) {
	comp := `$schema: http://azureml/sdk-2-0/CommandComponent.json
name: train_for_rai
version: 1
type: command
inputs:
  training_data: {type: path}
  target_column_name: {type: string}
outputs:
  model_output_json: {type: path}
code: ./train.py
command: python train.py --training_data ${{inputs.training_data}} --target ${{inputs.target_column_name}} --out ${{outputs.model_output_json}}
`
	pipe := `type: pipeline
jobs:
  train:
    component: ./train.yml
    inputs:
      training_data: {type: path, path: ./data/train.csv}
      target_column_name: y
  folder:
    component: ./train.yml
    inputs:
      training_data: {type: path, path: ./data}
      target_column_name: y
`
	s, warnings, dir, err := parseJob(t, pipe, map[string]string{"train.yml": comp, "train.py": "print(1)\n", "data/train.csv": "y\n1\n"})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Pipeline.Steps["train"].Spec
	if st.Code != filepath.Join(dir, "train.py") {
		t.Errorf("code = %s, want the file train.py", st.Code)
	}
	if in := st.Inputs["training_data"]; in.Type != job.URIFile || in.Path != filepath.Join(dir, "data", "train.csv") {
		t.Errorf("training_data given a file = %+v, want a uri_file", in)
	}
	if in := s.Pipeline.Steps["folder"].Spec.Inputs["training_data"]; in.Type != job.URIFolder {
		t.Errorf("training_data given a folder = %+v, want a uri_folder", in)
	}
	if o := st.Outputs["model_output_json"]; o.Type != job.URIFolder {
		t.Errorf("output of type path = %+v, want a uri_folder", o)
	}
	if len(warnings) == 0 {
		t.Error("no warning for the legacy type path")
	}
	js, _, _, err := parseJob(t, "command: python train.py ${{inputs.data}}\ncode: train.py\ninputs:\n  data: {type: path, path: azureml://datastores/workspaceblobstore/paths/x/rows.csv}\n",
		map[string]string{"train.py": ""})
	if err != nil || js.Inputs["data"].Type != job.URIFile || filepath.Base(js.Code) != "train.py" {
		t.Errorf("a command job with code: train.py and a path URI naming a file: %+v, %v", js, err)
	}
}
