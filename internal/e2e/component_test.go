package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/component"
)

// Components end to end, as a user sees them: a command component registered from Azure's file
// shape (its code folder uploaded), listed and shown; a pipeline job naming it by
// azureml:train@latest accepted by the workspace; a value that breaks the component's declared
// type refused naming the file, step and input; a second version that @latest then picks,
// archive and restore; and the registry after a server kill -9.
func TestComponents(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"src/train.py": "import sys\nprint('training', sys.argv[1:])\n",
		"train.yml": `$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: train
display_name: Train
version: 1
type: command
inputs:
  epochs: {type: integer, default: 3, min: 1}
  optim: {type: string, default: adam, enum: [adam, sgd]}
outputs:
  model: {type: uri_folder}
code: ./src
command: python train.py ${{inputs.epochs}} ${{inputs.optim}} ${{outputs.model}}
`,
		"pipeline.yml": `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
settings: {default_compute: azureml:local}
inputs: {n: 5}
jobs:
  first:
    component: azureml:train@latest
    inputs: {epochs: "${{parent.inputs.n}}"}
  second:
    component: azureml:train:1
    inputs: {optim: sgd}
`,
		"bad.yml": `type: pipeline
jobs:
  train:
    component: azureml:train@latest
    inputs: {epochs: many}
`,
		"ghost.yml": "type: pipeline\njobs:\n  a: {component: azureml:ghost@latest}\n",
	})
	file := func(name string) string { return filepath.Join(dir, name) }

	r := w.ok("component", "create", "-f", file("train.yml"))
	if !strings.Contains(r.stdout, "Created command component train version 1") || !strings.Contains(r.stdout, "azureml:train:1") {
		t.Errorf("component create said:\n%s", r.stdout)
	}
	if r := w.run("component", "create", "-f", file("train.yml")); r.code == 0 || !strings.Contains(r.stderr, "component train version 1 already exists") {
		t.Errorf("creating version 1 again: exit %d\n%s", r.code, r.stderr)
	}
	r = w.ok("component", "list")
	if !strings.Contains(r.stdout, "train") || !strings.Contains(r.stdout, "epochs,optim") {
		t.Errorf("component list:\n%s", r.stdout)
	}
	var v component.Version
	w.dataJSON(&v, "component", "show", "train@latest")
	if v.Version != "1" || v.Type != "command" || v.Job == nil || v.Job.CodeSnapshot == "" || v.Inputs["epochs"].Value != "3" {
		t.Errorf("component show train@latest = %+v; want version 1 with its code snapshot and epochs default 3", v)
	}
	r = w.ok("component", "show", "train")
	for _, want := range []string{"epochs: integer, default 3, min 1", "optim: string, default adam, one of adam|sgd", "component: azureml:train:1"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("component show does not say %q:\n%s", want, r.stdout)
		}
	}

	r = w.ok("job", "create", "-f", file("pipeline.yml"), "--dry-run")
	if !strings.Contains(r.stdout, "Dry run (nothing created): a pipeline of 2 step(s)") ||
		!strings.Contains(r.stdout, "first (command on local)\n  component: azureml:train@latest") {
		t.Errorf("job create --dry-run said:\n%s", r.stdout)
	}

	// The workspace accepts a pipeline that names the component, and resolves it at create.
	name := w.create(file("pipeline.yml"))
	if d := w.show(name); d.Spec.Pipeline == nil || d.Spec.Pipeline.Steps["first"].Component != "train:1" ||
		d.Spec.Pipeline.Steps["first"].Spec.Inputs["epochs"].Value != "5" || d.Spec.Pipeline.Steps["second"].Spec.Inputs["optim"].Value != "sgd" {
		t.Errorf("pipeline %s as created: %+v", name, d.Spec.Pipeline)
	}
	if r := w.run("job", "create", "-f", file("bad.yml")); r.code != 1 || !strings.Contains(r.stderr, "bad.yml: jobs.train.inputs.epochs: expected an integer") {
		t.Errorf("a pipeline giving epochs: many: exit %d\n%s", r.code, r.stderr)
	}
	if r := w.run("job", "create", "-f", file("ghost.yml")); r.code == 0 || !strings.Contains(r.stderr, "jobs.a.component: no component ghost@latest") {
		t.Errorf("a pipeline naming a missing component: exit %d\n%s", r.code, r.stderr)
	}

	// Version 2 from the same file: @latest moves to it; archived, @latest is 1 again.
	w.ok("component", "create", "-f", file("train.yml"), "--version", "2", "--set", "display_name=Train v2")
	w.dataJSON(&v, "component", "show", "train@latest")
	if v.Version != "2" || v.DisplayName != "Train v2" {
		t.Errorf("after v2, train@latest = %s (%s)", v.Version, v.DisplayName)
	}
	w.ok("component", "archive", "train", "--version", "2")
	w.dataJSON(&v, "component", "show", "train@latest")
	if v.Version != "1" {
		t.Errorf("with v2 archived, train@latest = %s, want 1", v.Version)
	}

	w.killServer()
	w.startServer()
	var all []component.Version
	r = w.ok("component", "list", "--name", "train", "--include-archived", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &all); err != nil || len(all) != 2 || !all[0].Archived || all[0].Version != "2" {
		t.Errorf("after a restart, the versions of train = %+v (%v)", all, err)
	}
	w.ok("component", "restore", "train", "--version", "2")
	w.dataJSON(&v, "component", "show", "train@latest")
	if v.Version != "2" || v.Job == nil || v.Job.CodeSnapshot == "" {
		t.Errorf("restored, train@latest = %+v, want version 2 with its code", v)
	}
}

// job create uploads what every step of a pipeline needs, as it does a command job's: each
// step's code folder (an inline step's, a component file's) and the local data it reads.
func TestPipelineUploadsEveryStep(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"prep/prep.py":  "print('prep')\n",
		"src/train.py":  "print('train')\n",
		"data/rows.csv": "a,b\n1,2\n",
		"train.yml":     "name: train\ninputs: {data: {type: uri_folder}}\ncode: ./src\ncommand: python train.py ${{inputs.data}}\n",
		"pipeline.yml": `type: pipeline
settings: {default_compute: local}
inputs:
  raw: {type: uri_folder, path: ./data}
jobs:
  prep:
    code: ./prep
    command: python prep.py ${{inputs.raw}} ${{outputs.clean}}
    inputs:
      raw: ${{parent.inputs.raw}}
    outputs:
      clean:
  train:
    component: ./train.yml
    inputs:
      data: ${{parent.jobs.prep.outputs.clean}}
`,
	})
	r := w.ok("job", "create", "-f", filepath.Join(dir, "pipeline.yml"), "-o", "json")
	var created api.RunDetail
	if err := json.Unmarshal([]byte(r.stdout), &created); err != nil {
		t.Fatalf("job create output: %v\n%s", err, r.stdout)
	}
	name := created.ID
	// The pipeline's input, which prep reads too, is scanned and sent once.
	if n := strings.Count(r.stderr, "Uploaded input raw"); n != 1 {
		t.Errorf("job create said %d times that it uploaded input raw, want 1:\n%s", n, r.stderr)
	}
	d := w.show(name)
	if d.Spec.Pipeline == nil {
		t.Fatalf("job show %s has no pipeline: %+v", name, d.Spec)
	}
	prep, train := d.Spec.Pipeline.Steps["prep"], d.Spec.Pipeline.Steps["train"]
	if prep.Spec.CodeSnapshot == "" || train.Spec.CodeSnapshot == "" || prep.Spec.CodeSnapshot == train.Spec.CodeSnapshot {
		t.Errorf("code snapshots: prep %q, train %q; want one of each step's own folder", prep.Spec.CodeSnapshot, train.Spec.CodeSnapshot)
	}
	if prep.Spec.Inputs["raw"].Manifest == "" {
		t.Errorf("prep's local input was not uploaded: %+v", prep.Spec.Inputs["raw"])
	}
	if train.From["data"].Step != "prep" {
		t.Errorf("train reads %+v, want prep's output", train.From)
	}
}
