package controller

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/spec"
)

const trainComponent = `type: command
name: train
inputs:
  data: {type: uri_folder}
  epochs: {type: integer, default: 3, min: 1, max: 100}
  optim: {type: string, default: adam, enum: [adam, sgd]}
outputs:
  model: {type: uri_folder}
command: python train.py --data ${{inputs.data}} --epochs ${{inputs.epochs}} --optim ${{inputs.optim}} --out ${{outputs.model}}
`

// writeFiles writes name → content under a new directory and returns it.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// registerComponent decodes a component file as the CLI does and registers it.
func registerComponent(t testing.TB, f *fixture, dir, file string) *component.Version {
	t.Helper()
	c, _, err := spec.ParseComponentFile(filepath.Join(dir, file), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Job != nil {
		c.Job.Code, c.Job.CodeSnapshot = "", putTree(t, f, map[string]string{"train.py": "print(1)\n"})
	}
	v, err := f.c.Workspace.Components.Create(t.Context(), api.CreateComponentRequest{Spec: *c, Source: file})
	if err != nil {
		t.Fatalf("CreateComponent %s: %v", file, err)
	}
	return v
}

// pipelineSpec decodes a pipeline job file as the CLI does.
func pipelineSpec(t testing.TB, dir, yml string) *job.Spec {
	t.Helper()
	sp, _, err := spec.ParseJob("pipeline.yml", []byte(yml), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// A step naming a registered component by @latest and by version gets the component's command,
// code snapshot and declared defaults, its given values checked against the declarations.
func TestResolvePipelineRegisteredCommand(t *testing.T) {
	f := newFixture(t)
	dir := writeFiles(t, map[string]string{"train.yml": trainComponent, "data/x.csv": "1\n"})
	v1 := registerComponent(t, f, dir, "train.yml")
	v2 := registerComponent(t, f, dir, "train.yml")
	if v1.Version != "1" || v2.Version != "2" {
		t.Fatalf("versions = %s, %s; want 1, 2", v1.Version, v2.Version)
	}
	yml := `type: pipeline
settings: {default_compute: azureml:local}
inputs: {raw: {type: uri_folder, path: ./data}, n: 7}
outputs: {final: {mode: upload}}
jobs:
  first:
    component: azureml:train@latest
    inputs: {data: "${{parent.inputs.raw}}", epochs: "${{parent.inputs.n}}"}
  second:
    component: azureml:train:1
    inputs: {data: "${{parent.jobs.first.outputs.model}}", optim: sgd}
    outputs: {model: "${{parent.outputs.final}}"}
`
	sp := pipelineSpec(t, dir, yml)
	if err := f.c.Workspace.ResolvePipeline(t.Context(), sp); err != nil {
		t.Fatalf("resolvePipeline: %v", err)
	}
	first, second := sp.Pipeline.Steps["first"], sp.Pipeline.Steps["second"]
	if first.Component != "train:2" || second.Component != "train:1" {
		t.Errorf("components = %q, %q; want train:2 (latest), train:1", first.Component, second.Component)
	}
	if first.Spec.CodeSnapshot == "" || first.Spec.Compute != "local" || !first.Deterministic {
		t.Errorf("first = %+v; want the component's code snapshot, compute local, deterministic", first)
	}
	if got := first.Spec.Inputs["epochs"].Value; got != "7" {
		t.Errorf("first epochs = %q, want 7 (the pipeline's input)", got)
	}
	if got := second.Spec.Inputs["epochs"].Value; got != "3" {
		t.Errorf("second epochs = %q, want the default 3", got)
	}
	if got := second.Spec.Inputs["optim"].Value; got != "sgd" {
		t.Errorf("second optim = %q, want sgd", got)
	}
	if got := second.From["data"]; got != (job.StepRef{Step: "first", Output: "model"}) {
		t.Errorf("second reads %+v, want first.model", got)
	}
	if got := sp.Pipeline.Outputs["final"]; got != (job.StepRef{Step: "second", Output: "model"}) {
		t.Errorf("pipeline output final = %+v, want second.model", got)
	}
}

// Values that break a registered component's declarations are refused naming the step and input.
func TestResolvePipelineRegisteredErrors(t *testing.T) {
	f := newFixture(t)
	dir := writeFiles(t, map[string]string{"train.yml": trainComponent, "data/x.csv": "1\n"})
	registerComponent(t, f, dir, "train.yml")
	for _, tt := range []struct {
		name, step string
		kind       Kind
		want       []string
	}{
		{"not an integer", "{component: azureml:train@latest, inputs: {data: {path: ./data}, epochs: many}}", Invalid,
			[]string{"jobs.a.inputs.epochs: expected an integer", "train:1"}},
		{"below min", "{component: azureml:train@latest, inputs: {data: {path: ./data}, epochs: 0}}", Invalid,
			[]string{"jobs.a.inputs.epochs: 0 is below min 1"}},
		{"not in enum", "{component: azureml:train@latest, inputs: {data: {path: ./data}, optim: lbfgs}}", Invalid,
			[]string{"jobs.a.inputs.optim", "enum", "adam, sgd"}},
		{"missing input", "{component: azureml:train@latest}", Invalid,
			[]string{"jobs.a.inputs.data: required by the component"}},
		{"unknown input", "{component: azureml:train@latest, inputs: {data: {path: ./data}, lr: 1}}", Invalid,
			[]string{"jobs.a.inputs.lr: the component has no input lr"}},
		{"unknown component", "{component: azureml:ghost@latest}", NotFound,
			[]string{"jobs.a.component: no component ghost@latest", "hangar component list"}},
		{"unknown version", "{component: azureml:train:9}", NotFound,
			[]string{"jobs.a.component: no component train:9", "its latest version is 1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp := pipelineSpec(t, dir, "type: pipeline\njobs:\n  a: "+tt.step+"\n")
			wantKind(t, f.c.Workspace.ResolvePipeline(t.Context(), sp), tt.kind, tt.want...)
		})
	}
}

// A registered pipeline component whose steps name registered components is inlined as
// <step>.<inner>, and the steps after it read its outputs from the inner step that writes them.
func TestResolvePipelineRegisteredPipelineComponent(t *testing.T) {
	f := newFixture(t)
	dir := writeFiles(t, map[string]string{
		"train.yml":  trainComponent,
		"data/x.csv": "1\n",
		"twice.yml": `type: pipeline
name: twice
inputs: {data: {type: uri_folder}, epochs: {type: integer, default: 2}}
outputs: {model: {type: uri_folder}}
jobs:
  one:
    component: azureml:train@latest
    inputs: {data: "${{parent.inputs.data}}", epochs: "${{parent.inputs.epochs}}"}
  two:
    component: azureml:train@latest
    inputs: {data: "${{parent.jobs.one.outputs.model}}"}
    outputs: {model: "${{parent.outputs.model}}"}
`,
	})
	registerComponent(t, f, dir, "train.yml")
	registerComponent(t, f, dir, "twice.yml")
	yml := `type: pipeline
jobs:
  outer:
    type: pipeline
    component: azureml:twice@latest
    inputs: {data: {type: uri_folder, path: ./data}, epochs: 9}
  after:
    component: azureml:train@latest
    inputs: {data: "${{parent.jobs.outer.outputs.model}}"}
`
	sp := pipelineSpec(t, dir, yml)
	if err := f.c.Workspace.ResolvePipeline(t.Context(), sp); err != nil {
		t.Fatalf("resolvePipeline: %v", err)
	}
	steps := sp.Pipeline.Steps
	one, ok := steps["outer.one"]
	if !ok || len(steps) != 3 {
		t.Fatalf("steps = %v; want outer.one, outer.two, after", slices.Sorted(maps.Keys(steps)))
	}
	if one.Group != "outer" || one.Component != "train:1" || one.Spec.Inputs["epochs"].Value != "9" {
		t.Errorf("outer.one = group %q, component %q, epochs %q; want outer, train:1, 9", one.Group, one.Component, one.Spec.Inputs["epochs"].Value)
	}
	if got := steps["after"].From["data"]; got != (job.StepRef{Step: "outer.two", Output: "model"}) {
		t.Errorf("after reads %+v, want outer.two.model", got)
	}
}
