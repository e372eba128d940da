package controller

import (
	"slices"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/spec"
)

// A sweep whose trial names a registered command component: the component's command and code
// become the trial's, the search space binds the inputs of the same name (each trial its own
// value), the sweep's inputs the others, declared defaults the rest; the reference is pinned.
func TestSweepTrialFromRegisteredComponent(t *testing.T) {
	f := newFixture(t)
	dir := writeFiles(t, map[string]string{"train.yml": trainComponent, "data/x.csv": "1\n"})
	registerComponent(t, f, dir, "train.yml")
	v2 := registerComponent(t, f, dir, "train.yml")
	yml := `type: sweep
compute: azureml:local
trial: azureml:train@latest
inputs: {data: {type: uri_folder, path: ./data}}
search_space:
  epochs: {type: choice, values: [2, 4]}
sampling_algorithm: {type: grid}
objective: {goal: maximize, primary_metric: acc}
limits: {max_total_trials: 2}
`
	uploaded := func(sp *job.Spec) { // as the CLI does before it sends the job
		in := sp.Inputs["data"]
		in.Manifest = putTree(t, f, map[string]string{"x.csv": "1\n"})
		sp.Inputs["data"] = in
	}
	sp, _, err := spec.ParseJob("sweep.yml", []byte(yml), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	uploaded(sp)
	r, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: *sp})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	got := r.Spec
	if got.Sweep.Trial != "azureml:train:"+v2.Version || !slices.Equal(got.Sweep.ParamInputs, []string{"epochs"}) {
		t.Errorf("trial %q param inputs %v; want azureml:train:%s pinned, epochs from the search space", got.Sweep.Trial, got.Sweep.ParamInputs, v2.Version)
	}
	if !strings.Contains(got.Command, "--epochs ${{inputs.epochs}}") || got.CodeSnapshot == "" {
		t.Errorf("trial command %q snapshot %q; want the component's", got.Command, got.CodeSnapshot)
	}
	if _, ok := got.Inputs["epochs"]; ok || got.Inputs["optim"].Value != "adam" || got.Inputs["data"].Manifest == "" {
		t.Errorf("trial inputs %+v; want data from the sweep, optim's default, epochs per trial", got.Inputs)
	}
	trial, err := spec.TrialSpec(got, map[string]any{"epochs": int64(4)})
	if err != nil || trial.Inputs["epochs"].Value != "4" {
		t.Errorf("trial 1 inputs %+v (%v); want epochs 4", trial.Inputs, err)
	}

	for _, tt := range []struct{ name, yml, want string }{
		{"space name not an input", strings.Replace(yml, "epochs: {type: choice", "lr: {type: choice", 1), "search_space.lr: the trial's component train:2 has no input lr"},
		{"unknown component", strings.Replace(yml, "azureml:train@latest", "azureml:nope@latest", 1), "trial: "},
	} {
		sp, _, err := spec.ParseJob("sweep.yml", []byte(tt.yml), dir, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		uploaded(sp)
		_, err = f.c.Create(t.Context(), api.CreateJobRequest{Spec: *sp})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Create = %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}
