package component

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// A pipeline job defined by a component (component: ./pipeline.yml at its top) inlines the
// component with no prefix: its steps keep their names, the job's inputs are the component's
// values; the job's outputs then give their settings to the steps that write them, the fields
// they give and no others.
func TestInlineAtTheTopAndApplyOutputs(t *testing.T) {
	c := Spec{Name: "p", Type: Pipeline,
		Inputs:  map[string]Input{"n": {Input: job.Input{Type: job.InputInteger, Value: "2"}, HasDefault: true}},
		Outputs: map[string]job.Output{"scores": {Type: job.URIFolder}, "model": {Type: job.MLflowModel}},
		Graph: &Graph{
			Steps: map[string]Step{
				"prep": {PipelineStep: job.PipelineStep{Spec: job.Spec{Command: "prep",
					Inputs:  map[string]job.Input{"k": {Type: job.InputInteger}},
					Outputs: map[string]job.Output{"out": {Type: job.URIFolder, Mode: "rw_mount"}}}},
					Params: map[string]string{"k": "n"}},
				"score": {PipelineStep: job.PipelineStep{Spec: job.Spec{Command: "score",
					Outputs: map[string]job.Output{"s": {Type: job.URIFolder, Mode: "rw_mount"}, "m": {Type: job.MLflowModel, Mode: "rw_mount"}}},
					From: map[string]job.StepRef{"x": {Step: "prep", Output: "out"}}}},
			},
			Outputs: map[string]job.StepRef{"scores": {Step: "score", Output: "s"}, "model": {Step: "score", Output: "m"}},
		}}
	steps, outs, errs := Inline("", c, Given{Values: map[string]job.Input{"n": {Type: job.InputInteger, Value: "5"}}}, "cpu")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if st, ok := steps["prep"]; !ok || st.Group != "" || st.Spec.Inputs["k"].Value != "5" || st.Spec.Compute != "cpu" {
		t.Errorf("prep = %+v (%v); want its own name, k bound to 5, the default compute", st, ok)
	}
	if got := steps["score"].From["x"]; got != (job.StepRef{Step: "prep", Output: "out"}) {
		t.Errorf("score reads %+v", got)
	}
	ApplyOutputs(steps, outs, map[string]job.Output{
		"scores": {Type: job.URIFile, Path: "azureml://datastores/workspaceblobstore/paths/x/s.csv", Mode: "upload"},
		"model":  {Mode: "upload"}, // the type stays the step's
		"ghost":  {Mode: "upload"},
	})
	want := map[string]job.Output{
		"s": {Type: job.URIFile, Mode: "upload", Path: "azureml://datastores/workspaceblobstore/paths/x/s.csv"},
		"m": {Type: job.MLflowModel, Mode: "upload"},
	}
	if diff := cmp.Diff(want, steps["score"].Spec.Outputs); diff != "" {
		t.Errorf("score's outputs (-want +got):\n%s", diff)
	}
	if c.Graph.Steps["score"].Spec.Outputs["s"].Type != job.URIFolder {
		t.Error("ApplyOutputs changed the component's own step")
	}

	nested, _, _ := Inline("outer", c, Given{}, "")
	if _, ok := nested["outer.prep"]; !ok || nested["outer.prep"].Group != "outer" {
		t.Errorf("a nested use still prefixes its steps: %v", nested)
	}
}
