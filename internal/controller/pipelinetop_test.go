package controller

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// A pipeline job defined by a registered pipeline component (component: azureml:<name>@latest at
// its top, Azure's batch pipeline jobs): the workspace makes the component's steps the job's,
// under their own names, its inputs the component's values; the job's outputs keep what the
// component says of them and take what the job gives (mode: upload), as do the steps that write
// them. A step's outputs given on a registered component keep its declared type.
func TestResolvePipelineDefinedByARegisteredComponent(t *testing.T) {
	f := newFixture(t)
	dir := writeFiles(t, map[string]string{
		"train.yml": `type: command
name: train
inputs: {data: {type: uri_folder}, epochs: {type: integer, default: 3}}
outputs: {model: {type: custom_model}}
command: python train.py --data ${{inputs.data}} --epochs ${{inputs.epochs}} --out ${{outputs.model}}
`,
		"scoring.yml": `type: pipeline
name: scoring
display_name: Scoring
inputs: {input_data: {type: uri_folder}, epochs: {type: integer, default: 2}}
outputs: {model: {type: custom_model}}
jobs:
  fit:
    component: azureml:train@latest
    inputs: {data: "${{parent.inputs.input_data}}", epochs: "${{parent.inputs.epochs}}"}
    outputs:
      model: {mode: upload, path: "${{parent.outputs.model}}"}
`,
		"data/x.csv": "1\n",
	})
	registerComponent(t, f, dir, "train.yml")
	registerComponent(t, f, dir, "scoring.yml")
	sp := pipelineSpec(t, dir, `type: pipeline
compute: azureml:local
component: azureml:scoring@latest
inputs:
  input_data: {type: uri_folder, path: ./data}
  epochs: 9
outputs:
  model: {path: azureml://datastores/workspaceblobstore/paths/models/m1}
`)
	if err := f.c.Workspace.ResolvePipeline(t.Context(), sp); err != nil {
		t.Fatalf("resolvePipeline: %v", err)
	}
	p := sp.Pipeline
	if names := slices.Sorted(maps.Keys(p.Steps)); !slices.Equal(names, []string{"fit"}) || p.Component != "scoring:1" || sp.DisplayName != "Scoring" {
		t.Fatalf("steps %v, component %q, display name %q", names, p.Component, sp.DisplayName)
	}
	fit := p.Steps["fit"]
	if fit.Component != "train:1" || fit.Spec.Inputs["epochs"].Value != "9" || fit.Spec.Compute != "local" || fit.Group != "" {
		t.Errorf("fit = %+v", fit)
	}
	want := job.Output{Type: job.CustomModel, Mode: "upload", Path: "azureml://datastores/workspaceblobstore/paths/models/m1"}
	if diff := cmp.Diff(want, fit.Spec.Outputs["model"]); diff != "" {
		t.Errorf("fit's output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]job.Output{"model": {Type: job.CustomModel, Mode: "rw_mount", Path: want.Path}}, sp.Outputs); diff != "" {
		t.Errorf("the job's outputs (-want +got):\n%s", diff)
	}
	if got := p.Outputs["model"]; got != (job.StepRef{Step: "fit", Output: "model"}) {
		t.Errorf("output model is written by %+v", got)
	}

	for _, tt := range []struct{ yml, want string }{
		{"type: pipeline\ncomponent: azureml:train@latest\ninputs: {data: {type: uri_folder, path: ./data}}\n", "component: train:1 is a command component"},
		{"type: pipeline\ncomponent: azureml:scoring@latest\n", "inputs.input_data: required by the component (declared uri_folder, no default) (component scoring:1)"},
		{"type: pipeline\ncomponent: azureml:scoring@latest\ninputs: {input_data: {type: uri_folder, path: ./data}}\noutputs: {ghost: {mode: upload}}\n", "outputs.ghost: component scoring:1 has no output ghost (its outputs: model)"},
	} {
		sp := pipelineSpec(t, dir, tt.yml)
		wantKind(t, f.c.Workspace.ResolvePipeline(t.Context(), sp), Invalid, tt.want)
	}
	ghost := pipelineSpec(t, dir, "type: pipeline\ncomponent: azureml:ghost@latest\n")
	wantKind(t, f.c.Workspace.ResolvePipeline(t.Context(), ghost), NotFound, "component: no component ghost@latest")
}
