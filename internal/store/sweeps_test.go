package store

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tracking"
)

func trialRun(id string, now time.Time) *job.Run {
	return &job.Run{ID: id, Compute: "local", Status: job.Queued, CreatedAt: now, Spec: job.Spec{Type: "command", Command: "true"}}
}

// A trial's index is taken once, across a reopen of the database too: the second create of
// the same index writes nothing, not even its run; a run name taken is ErrExists.
func TestCreateTrialIsUniqueAcrossReopen(t *testing.T) {
	ctx := t.Context()
	path := testDSN(t)
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := st.RunWrites.CreateSweep(ctx, &job.Run{ID: "sw", Compute: "local", Status: job.Queued, CreatedAt: now,
		Spec: job.Spec{Type: "sweep", Sweep: &job.SweepRun{}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.RunWrites.CreateTrial(ctx, "sw", 0, []byte(`{"lr":0.1}`), trialRun("sw_0", now)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.RunWrites.CreateTrial(ctx, "sw", 0, []byte(`{"lr":0.2}`), trialRun("sw_0_again", now)); !errors.Is(err, ErrTrialExists) {
		t.Errorf("second trial 0 = %v, want ErrTrialExists", err)
	}
	if _, err := st.Runs.Run(ctx, "sw_0_again"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused trial's run: %v, want none created", err)
	}
	if err := st.RunWrites.CreateTrial(ctx, "sw", 1, []byte(`{"lr":0.2}`), trialRun("sw_0", now)); !errors.Is(err, ErrExists) {
		t.Errorf("trial 1 under a taken name = %v, want ErrExists", err)
	}
	ts, err := st.Parents.Trials(ctx, "sw")
	if err != nil || len(ts) != 1 || ts[0].RunID != "sw_0" || string(ts[0].Params) != `{"lr":0.1}` || ts[0].Run == nil {
		t.Errorf("Trials = %+v %v, want trial 0 alone with its run", ts, err)
	}
	active, err := st.Parents.ActiveSweeps(ctx)
	if err != nil || len(active) != 1 || active[0].ID != "sw" {
		t.Errorf("ActiveSweeps = %v %v, want sw", active, err)
	}
	if err := st.Parents.StopTrial(ctx, "sw", 0, "first"); err != nil {
		t.Fatal(err)
	}
	if err := st.Parents.StopTrial(ctx, "sw", 0, "second"); err != nil {
		t.Fatal(err)
	}
	if tr, ok, err := st.Parents.TrialOf(ctx, "sw_0"); err != nil || !ok || tr.Parent != "sw" || tr.Stopped != "first" {
		t.Errorf("TrialOf = %+v %v %v, want sw's trial stopped for the first reason", tr, ok, err)
	}
}

// A metric's series merges both writers in report order: by step, then time.
func TestMetricSeriesMergesBothWriters(t *testing.T) {
	ctx := t.Context()
	st, err := Open(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	if err := st.RunWrites.CreateRun(ctx, trialRun("r", now)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Runs.AppendMetrics(ctx, "r", []job.Metric{{Seq: 1, Name: "acc", Value: 3, Step: 2, Time: now},
		{Seq: 2, Name: "loss", Value: 9, Step: 0, Time: now}}); err != nil {
		t.Fatal(err)
	}
	if err := st.RunWrites.LogBatch(ctx, "r", Batch{Metrics: []tracking.MetricPoint{{Key: "acc", Value: 2, Step: 1, Timestamp: now.UnixMilli()},
		{Key: "acc", Value: 1, Step: 0, Timestamp: now.UnixMilli() + 5}}}); err != nil {
		t.Fatal(err)
	}
	ms, err := st.Parents.MetricSeries(ctx, "r", "acc")
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, m := range ms {
		got = append(got, m.Value)
	}
	if !slices.Equal(got, []float64{1, 2, 3}) {
		t.Errorf("series = %v, want 1 2 3 (by step, both writers, acc only)", got)
	}
}
