package server

import (
	"net/http"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// The steps route answers a pipeline's steps in the graph's order; job show of the pipeline
// carries the same, job show and job list of a step name its pipeline; a job that is not a
// pipeline is a 404 saying so, and a run token cannot read it.
func TestPipelineStepsRoute(t *testing.T) {
	ts := newTestServer(t)
	step := func(cmd string, from map[string]job.StepRef) job.PipelineStep {
		return job.PipelineStep{Spec: job.Spec{Type: "command", Command: cmd,
			Outputs: map[string]job.Output{"o": {Type: "uri_folder"}}}, From: from, Deterministic: true}
	}
	pl, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Type: "pipeline", Name: "pl",
		Pipeline: &job.PipelineRun{Steps: map[string]job.PipelineStep{
			"prep":  step("python prep.py --o ${{outputs.o}}", nil),
			"train": step("python train.py --d ${{inputs.d}} --o ${{outputs.o}}", map[string]job.StepRef{"d": {Step: "prep", Output: "o"}}),
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.parents.PipelinePass(t.Context()); err != nil {
		t.Fatal(err)
	}
	d, err := ts.admin.Jobs.PipelineSteps(t.Context(), pl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Steps) != 2 || d.Steps[0].Name != "prep" || d.Steps[0].RunID != "pl_prep" || d.Steps[0].State != "queued" ||
		d.Steps[1].Name != "train" || d.Steps[1].State != "" || d.Steps[1].Deps[0] != "prep" {
		t.Errorf("steps = %+v, want prep queued as pl_prep and train waiting on it", d.Steps)
	}
	show, err := ts.admin.Jobs.Get(t.Context(), "pl")
	if err != nil {
		t.Fatal(err)
	}
	if show.Pipeline == nil || len(show.Pipeline.Steps) != 2 {
		t.Errorf("job show of a pipeline: pipeline = %+v, want its two steps", show.Pipeline)
	}
	show, err = ts.admin.Jobs.Get(t.Context(), "pl_prep")
	if err != nil {
		t.Fatal(err)
	}
	if show.PipelineOf == nil || show.PipelineOf.Pipeline != "pl" || show.PipelineOf.Step != "prep" {
		t.Errorf("job show of a step: pipeline_of = %+v, want pipeline pl step prep", show.PipelineOf)
	}
	runs, err := ts.admin.Jobs.List(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, r := range runs {
		if r.PipelineOf != nil && r.ID == "pl_prep" {
			marked++
		}
	}
	if marked != 1 {
		t.Errorf("job list did not mark pl_prep as a step: %+v", runs)
	}
	ts.createJob(t, "plain")
	if code, body := ts.raw(t, adminToken, http.MethodGet, "/api/jobs/plain/steps", ""); code != http.StatusNotFound || body.Error != "job plain is not a pipeline" {
		t.Errorf("steps of a command job = %d %+v, want 404 saying it is not a pipeline", code, body)
	}
	if code, _ := ts.raw(t, ts.ctrl.RunToken("pl_prep"), http.MethodGet, "/api/jobs/pl/steps", ""); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Errorf("a run token read the steps: %d", code)
	}
}
