package store

import (
	"errors"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

func pipelineRun(id string, now time.Time) *job.Run {
	return &job.Run{ID: id, Status: job.Queued, CreatedAt: now,
		Spec: job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{}}}
}

func endRun(t *testing.T, st *Store, id string, s job.State, at time.Time) {
	t.Helper()
	if _, err := st.RunWrites.UpdateRun(t.Context(), id, func(r *job.Run) ([]job.Event, error) {
		r.Status, r.EndedAt = s, &at
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A step is started once, across a reopen too: a second create of the same step writes
// nothing, not even its run; a step reused or skipped has a row and no run; StepOf and
// StepsOf find a step's pipeline from its run.
func TestPipelineStepsAreUniqueAcrossReopen(t *testing.T) {
	ctx := t.Context()
	path := testDSN(t)
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := st.RunWrites.CreatePipeline(ctx, pipelineRun("pl", now)); err != nil {
		t.Fatal(err)
	}
	if err := st.RunWrites.CreateStep(ctx, Step{Pipeline: "pl", Name: "prep", CacheKey: "k1", CreatedAt: now}, trialRun("pl_prep", now)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.RunWrites.CreateStep(ctx, Step{Pipeline: "pl", Name: "prep", CreatedAt: now}, trialRun("pl_prep_2", now)); !errors.Is(err, ErrStepExists) {
		t.Errorf("second create of prep = %v, want ErrStepExists", err)
	}
	if _, err := st.Runs.Run(ctx, "pl_prep_2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused step's run: %v, want none created", err)
	}
	if err := st.Parents.PutStep(ctx, Step{Pipeline: "pl", Name: "prep", State: "skipped", CreatedAt: now}); !errors.Is(err, ErrStepExists) {
		t.Errorf("skip of a started step = %v, want ErrStepExists", err)
	}
	if err := st.Parents.PutStep(ctx, Step{Pipeline: "pl", Name: "score", State: "skipped", Reason: "train failed", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	steps, err := st.Parents.PipelineSteps(ctx, "pl")
	if err != nil || len(steps) != 2 || steps[0].Name != "prep" || steps[0].Run == nil || steps[0].CacheKey != "k1" ||
		steps[1].Name != "score" || steps[1].RunID != "" || steps[1].State != "skipped" || steps[1].Reason != "train failed" {
		t.Errorf("PipelineSteps = %+v %v, want prep with its run and score skipped", steps, err)
	}
	if s, ok, err := st.Parents.StepOf(ctx, "pl_prep"); err != nil || !ok || s.Pipeline != "pl" || s.Name != "prep" {
		t.Errorf("StepOf(pl_prep) = %+v %v %v", s, ok, err)
	}
	if _, ok, err := st.Parents.StepOf(ctx, ""); err != nil || ok {
		t.Errorf("StepOf(\"\") = %v %v, want not a step (skipped steps have no run)", ok, err)
	}
	if m, err := st.Parents.StepsOf(ctx, []string{"pl_prep", "pl"}); err != nil || len(m) != 1 || m["pl_prep"].Name != "prep" {
		t.Errorf("StepsOf = %v %v, want pl_prep alone", m, err)
	}
	if active, err := st.Parents.ActivePipelines(ctx); err != nil || len(active) != 1 || active[0].ID != "pl" {
		t.Errorf("ActivePipelines = %v %v, want pl", active, err)
	}
	if err := st.Parents.SetStepReason(ctx, "pl", "prep", "first"); err != nil {
		t.Fatal(err)
	}
	if err := st.Parents.SetStepReason(ctx, "pl", "prep", "second"); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := st.Parents.StepOf(ctx, "pl_prep"); s.Reason != "first" {
		t.Errorf("reason = %q, want the first one kept", s.Reason)
	}
}

// The step cache answers the newest completed run of a key, across pipelines; a failed run or
// a reused step (no run of its own) is never an answer.
func TestCachedStepIsTheNewestCompletedRun(t *testing.T) {
	ctx := t.Context()
	st, err := Open(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	for _, p := range []string{"a", "b", "c"} {
		if err := st.RunWrites.CreatePipeline(ctx, pipelineRun(p, now)); err != nil {
			t.Fatal(err)
		}
		if err := st.RunWrites.CreateStep(ctx, Step{Pipeline: p, Name: "train", CacheKey: "k", CreatedAt: now}, trialRun(p+"_train", now)); err != nil {
			t.Fatal(err)
		}
	}
	if hit, err := st.Parents.CachedStep(ctx, "k"); err != nil || hit != "" {
		t.Errorf("CachedStep before any completed = %q %v, want none", hit, err)
	}
	endRun(t, st, "a_train", job.Completed, now.Add(time.Minute))
	endRun(t, st, "b_train", job.Completed, now.Add(2*time.Minute))
	endRun(t, st, "c_train", job.Failed, now.Add(3*time.Minute))
	if err := st.Parents.PutStep(ctx, Step{Pipeline: "d", Name: "train", State: "completed", ReusedFrom: "b_train", CacheKey: "k", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if hit, err := st.Parents.CachedStep(ctx, "k"); err != nil || hit != "b_train" {
		t.Errorf("CachedStep = %q %v, want b_train (the newest completed)", hit, err)
	}
	if hit, err := st.Parents.CachedStep(ctx, "other"); err != nil || hit != "" {
		t.Errorf("CachedStep(other) = %q %v, want none", hit, err)
	}
	if err := st.Parents.SetPipelineReason(ctx, "c", "step train failed"); err != nil {
		t.Fatal(err)
	}
	if r, err := st.Parents.PipelineReason(ctx, "c"); err != nil || r != "step train failed" {
		t.Errorf("PipelineReason = %q %v", r, err)
	}
	if _, err := st.Parents.PipelineReason(ctx, "c_train"); !errors.Is(err, ErrNotFound) {
		t.Errorf("PipelineReason of a step = %v, want ErrNotFound", err)
	}
}
