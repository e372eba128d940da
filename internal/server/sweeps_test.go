package server

import (
	"net/http"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/sweep"
)

// The trials route answers a sweep's trials; a job that is not a sweep is a 404 saying so, and
// a run token cannot read it.
func TestSweepTrialsRoute(t *testing.T) {
	ts := newTestServer(t)
	sw, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Type: "sweep", Name: "sw",
		Command: "python t.py --lr ${{search_space.lr}}",
		Sweep: &job.SweepRun{Config: sweep.Config{
			Space:     sweep.Space{"lr": {Kind: "choice", Values: []any{0.1, 0.2}}},
			Sampling:  sweep.Sampling{Type: "grid"},
			Objective: sweep.Objective{Metric: "acc", Goal: "maximize"},
			Limits:    sweep.Limits{MaxTotalTrials: 2, MaxConcurrentTrials: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.parents.SweepPass(t.Context()); err != nil {
		t.Fatal(err)
	}
	d, err := ts.admin.Jobs.SweepTrials(t.Context(), sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Trials) != 1 || d.Trials[0].RunID != "sw_0" || string(d.Trials[0].Params) != `{"lr":0.1}` || d.Metric != "acc" {
		t.Errorf("trials = %+v, want trial sw_0 with lr 0.1", d)
	}
	show, err := ts.admin.Jobs.Get(t.Context(), "sw_0")
	if err != nil {
		t.Fatal(err)
	}
	if show.TrialOf == nil || show.TrialOf.Sweep != "sw" || show.TrialOf.Index != 0 {
		t.Errorf("job show of a trial: trial_of = %+v, want sweep sw index 0", show.TrialOf)
	}
	ts.createJob(t, "plain")
	if code, body := ts.raw(t, adminToken, http.MethodGet, "/api/jobs/plain/trials", ""); code != http.StatusNotFound || body.Error != "job plain is not a sweep" {
		t.Errorf("trials of a command job = %d %+v, want 404 saying it is not a sweep", code, body)
	}
	if code, _ := ts.raw(t, ts.ctrl.RunToken("sw_0"), http.MethodGet, "/api/jobs/sw/trials", ""); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Errorf("a run token read the trials: %d", code)
	}
}
