package controller

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/store"
	hpo "github.com/hangar-ml/hangar/internal/sweep"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// scriptedDecide stands in for the sweep engine (written beside this work): it starts trials in
// order, lr taking the choices in turn, up to the limits; it stops a running trial whose last
// report is below 0 ("bad"); it is done once max_total_trials were created.
func scriptedDecide(cfg hpo.Config, st hpo.State) hpo.Decision {
	var d hpo.Decision
	active := 0
	for _, t := range st.Trials {
		if t.State == hpo.Queued || t.State == hpo.Running {
			active++
			if n := len(t.Metrics); n > 0 && t.Metrics[n-1].Value < 0 && t.Stopped == "" {
				d.Stop = append(d.Stop, hpo.Stop{Index: t.Index, Reason: fmt.Sprintf("bandit: %g is below the best's slack", t.Metrics[n-1].Value)})
			}
		}
	}
	values := cfg.Space["lr"].Values
	for i := len(st.Trials); i < cfg.Limits.MaxTotalTrials && active < cfg.Limits.MaxConcurrentTrials; i++ {
		d.Start = append(d.Start, hpo.Params{"lr": values[i%len(values)]})
		active++
	}
	if len(st.Trials)+len(d.Start) >= cfg.Limits.MaxTotalTrials {
		d.Done, d.Reason = true, fmt.Sprintf("max_total_trials %d reached", cfg.Limits.MaxTotalTrials)
	}
	return d
}

func sweepSpec(total, concurrent int) job.Spec {
	return job.Spec{Type: "sweep", Command: "python train.py --lr ${{search_space.lr}}",
		Resources: job.Resources{InstanceCount: 1},
		Sweep: &job.SweepRun{Config: hpo.Config{
			Space:     hpo.Space{"lr": {Kind: "choice", Values: []any{0.1, 0.01, 0.001}}},
			Sampling:  hpo.Sampling{Type: "random", Seed: 7, Rule: "random"},
			Objective: hpo.Objective{Metric: "acc", Goal: "maximize"},
			Limits:    hpo.Limits{MaxTotalTrials: total, MaxConcurrentTrials: concurrent},
		}}}
}

func (f *fixture) sweepPass(t testing.TB) {
	t.Helper()
	if err := f.parents().SweepPass(t.Context()); err != nil {
		t.Fatalf("SweepPass: %v", err)
	}
}

func (f *fixture) trials(t testing.TB, sweep string) []store.Trial {
	t.Helper()
	ts, err := f.c.Store.Parents.Trials(t.Context(), sweep)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// finish runs a trial to its end, reporting the primary metric values first.
func (f *fixture) finish(t testing.TB, id string, values ...float64) {
	t.Helper()
	f.report(t, id, job.Running)
	f.logMetric(t, id, values...)
	f.report(t, id, job.Completed)
}

func (f *fixture) logMetric(t testing.TB, id string, values ...float64) {
	t.Helper()
	have, _ := f.c.Store.Runs.Metrics(t.Context(), id)
	var ms []job.Metric
	for i, v := range values {
		ms = append(ms, job.Metric{Seq: int64(len(have) + i + 1), Name: "acc", Value: v, Step: int64(len(have) + i), Time: f.clock.Advance(time.Second)})
	}
	if _, err := f.c.Store.Runs.AppendMetrics(t.Context(), id, ms); err != nil {
		t.Fatal(err)
	}
}

func newSweepFixture(t testing.TB) *fixture {
	f := newFixture(t)
	f.sweepDecide = scriptedDecide
	return f
}

// A sweep is a parent run that no backend ever sees; its trials are command runs created by the
// sweep loop within the concurrency limit, each binding its parameters as inputs; the sweep
// ends Completed with the best trial recorded once the engine is done and nothing runs.
func TestSweepRunsTrialsAndRecordsTheBest(t *testing.T) {
	f := newSweepFixture(t)
	p, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: sweepSpec(3, 2)})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	f.reconcile(t) // a queued sweep is no backend's to run
	f.sweepPass(t)
	f.reconcile(t)
	ts := f.trials(t, p.ID)
	if len(ts) != 2 || ts[0].RunID != p.ID+"_0" || ts[1].RunID != p.ID+"_1" {
		t.Fatalf("trials after the first pass = %+v, want %s_0 and %s_1", ts, p.ID, p.ID)
	}
	if got := slices.Sorted(slices.Values(f.fake.Submitted())); !slices.Equal(got, []string{p.ID + "_0", p.ID + "_1"}) {
		t.Errorf("backend got %v, want the two trials and never the sweep", got)
	}
	tr := f.run(t, p.ID+"_0")
	if tr.Spec.Command != "python train.py --lr ${{inputs.lr}}" || tr.Spec.Inputs["lr"] != (job.Input{Type: job.InputNumber, Value: "0.1"}) {
		t.Errorf("trial 0 runs %q with inputs %+v, want lr bound as an input", tr.Spec.Command, tr.Spec.Inputs)
	}
	if tr.Tags["mlflow.parentRunId"] != p.ID {
		t.Errorf("trial 0's tags %v, want MLflow's parent tag naming the sweep", tr.Tags)
	}
	if got := f.run(t, p.ID).Status; got != job.Running {
		t.Errorf("sweep is %s, want Running", got)
	}
	f.finish(t, p.ID+"_0", 0.5, 0.7)
	f.sweepPass(t)
	if ts = f.trials(t, p.ID); len(ts) != 3 {
		t.Fatalf("%d trials once one ended, want the third started", len(ts))
	}
	f.finish(t, p.ID+"_1", 0.9)
	f.finish(t, p.ID+"_2", 0.2)
	f.sweepPass(t)
	end := f.run(t, p.ID)
	if end.Status != job.Completed || !strings.Contains(end.StatusReason, "max_total_trials 3 reached") ||
		!strings.Contains(end.StatusReason, "best trial "+p.ID+"_1") {
		t.Errorf("sweep ended %s (%s), want Completed naming the limit and the best trial", end.Status, end.StatusReason)
	}
	d, err := f.c.Parents.SweepDetail(t.Context(), end)
	if err != nil {
		t.Fatal(err)
	}
	if d.BestChildRunID != p.ID+"_1" || d.BestMetric == nil || *d.BestMetric != 0.9 || string(d.BestParams) != `{"lr":0.01}` {
		t.Errorf("best = %s %v %s, want trial 1 with 0.9 and lr 0.01", d.BestChildRunID, d.BestMetric, d.BestParams)
	}
	if len(d.Trials) != 3 || len(d.Trials[0].Series) != 2 || *d.Trials[0].Metric != 0.7 {
		t.Errorf("trials detail = %+v, want 3 with trial 0's series of 2 ending at 0.7", d.Trials)
	}
}

// A trial the engine stops is canceled with its reason, which job show reads back.
func TestSweepStopsATrialWithItsReason(t *testing.T) {
	f := newSweepFixture(t)
	p := f.createSweep(t, sweepSpec(2, 2))
	f.sweepPass(t)
	f.reconcile(t)
	f.report(t, p.ID+"_1", job.Running)
	f.logMetric(t, p.ID+"_1", -3)
	f.sweepPass(t)
	r := f.run(t, p.ID+"_1")
	if r.Status != job.CancelRequested || !strings.Contains(r.StatusReason, "stopped by sweep "+p.ID+": bandit: -3") {
		t.Errorf("stopped trial is %s (%s), want CancelRequested with the engine's reason", r.Status, r.StatusReason)
	}
	tr, ok, err := f.c.Store.Parents.TrialOf(t.Context(), p.ID+"_1")
	if err != nil || !ok || tr.Stopped != "bandit: -3 is below the best's slack" {
		t.Errorf("TrialOf = %+v %v %v, want the stop reason kept", tr, ok, err)
	}
}

func (f *fixture) createSweep(t testing.TB, sp job.Spec) *job.Run {
	t.Helper()
	p, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: sp})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return p
}

// Canceling a sweep cancels its trials; the sweep is Canceled once they ended.
func TestSweepCancelCascades(t *testing.T) {
	f := newSweepFixture(t)
	p := f.createSweep(t, sweepSpec(4, 2))
	f.sweepPass(t)
	f.reconcile(t)
	if _, err := f.c.Cancel(t.Context(), p.ID); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t) // the dispatch loop leaves the sweep alone: it has no backend
	f.sweepPass(t)
	for _, id := range []string{p.ID + "_0", p.ID + "_1"} {
		if r := f.run(t, id); r.Status != job.CancelRequested || !strings.Contains(r.StatusReason, "its sweep "+p.ID+" was canceled") {
			t.Errorf("trial %s is %s (%s), want CancelRequested by the sweep", id, r.Status, r.StatusReason)
		}
	}
	if got := f.run(t, p.ID).Status; got != job.CancelRequested {
		t.Errorf("sweep is %s while its trials stop, want CancelRequested", got)
	}
	f.report(t, p.ID+"_0", job.Canceled)
	f.report(t, p.ID+"_1", job.Canceled)
	f.sweepPass(t)
	if r := f.run(t, p.ID); r.Status != job.Canceled {
		t.Errorf("sweep is %s (%s), want Canceled", r.Status, r.StatusReason)
	}
	if n := len(f.trials(t, p.ID)); n != 2 {
		t.Errorf("%d trials, want no trial started after the cancel", n)
	}
}

// A restarted server (a new controller over the same database) continues the sweep from the
// store: no trial is created twice, none is lost, and the engine's seed is the stored one.
func TestSweepContinuesAfterRestart(t *testing.T) {
	f := newSweepFixture(t)
	sp := sweepSpec(5, 2)
	sp.Sweep.Config.Sampling.Seed = 0 // chosen at create, then stored
	p := f.createSweep(t, sp)
	f.sweepPass(t)
	seed := f.run(t, p.ID).Spec.Sweep.Config.Sampling.Seed
	if seed == 0 {
		t.Fatal("no seed chosen at create")
	}
	g := &fixture{c: New(f.c.Config), fake: f.fake, clock: f.clock}
	var seen []int64
	g.sweepDecide = func(cfg hpo.Config, st hpo.State) hpo.Decision {
		seen = append(seen, cfg.Sampling.Seed)
		return scriptedDecide(cfg, st)
	}
	g.sweepPass(t)
	g.sweepPass(t)
	if n := len(g.trials(t, p.ID)); n != 2 {
		t.Fatalf("%d trials after the restart's passes, want the same 2", n)
	}
	if seen[0] != seed {
		t.Errorf("engine got seed %d after the restart, want the stored %d", seen[0], seed)
	}
	// A pass that died after creating a trial but before recording it leaves nothing to redo:
	// creating the same index again is refused by the store.
	sp1, err := spec.TrialSpec(f.run(t, p.ID).Spec, hpo.Params{"lr": 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.c.CreateTrialRun(t.Context(), f.run(t, p.ID), 1, json.RawMessage(`{"lr":0.01}`), sp1); err != nil {
		t.Fatalf("CreateTrialRun again: %v", err)
	}
	if n := len(g.trials(t, p.ID)); n != 2 {
		t.Errorf("%d trials after re-creating index 1, want 2", n)
	}
}

// The primary metric comes from tracking, both its writers: what the script logged with MLflow
// and what it wrote to the metrics file, in report (step) order.
func TestSweepReadsMetricsFromMLflowAndTheMetricsFile(t *testing.T) {
	f := newSweepFixture(t)
	p := f.createSweep(t, sweepSpec(1, 1))
	f.sweepPass(t)
	id := p.ID + "_0"
	f.report(t, id, job.Running)
	ms := f.clock.Now().UnixMilli()
	if err := f.c.Store.RunWrites.LogBatch(t.Context(), id, store.Batch{Metrics: []tracking.MetricPoint{
		{Key: "acc", Value: 0.4, Timestamp: ms, Step: 0}, {Key: "acc", Value: 0.6, Timestamp: ms + 1, Step: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Store.Runs.AppendMetrics(t.Context(), id, []job.Metric{{Seq: 1, Name: "acc", Value: 0.8, Step: 2, Time: f.clock.Advance(time.Second)}}); err != nil {
		t.Fatal(err)
	}
	f.report(t, id, job.Completed)
	f.sweepPass(t)
	d, err := f.c.Parents.SweepDetail(t.Context(), f.run(t, p.ID))
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, pt := range d.Trials[0].Series {
		got = append(got, pt.Value)
	}
	if !slices.Equal(got, []float64{0.4, 0.6, 0.8}) || d.BestMetric == nil || *d.BestMetric != 0.8 {
		t.Errorf("series %v, best %v: want MLflow's two points then the file's, the last one best", got, d.BestMetric)
	}
	if r := f.run(t, p.ID); r.Status != job.Completed {
		t.Errorf("sweep is %s (%s), want Completed", r.Status, r.StatusReason)
	}
}

// A sweep is validated against the workspace like a command job, on a trial it would run.
func TestCreateSweepRefusals(t *testing.T) {
	tests := []struct {
		name string
		edit func(*job.Spec)
		want string
	}{
		{"unknown target", func(s *job.Spec) { s.Compute = "nope" }, `compute: no compute target named "nope"`},
		{"no metric", func(s *job.Spec) { s.Sweep.Config.Objective.Metric = "" }, "objective.primary_metric: required"},
		{"no space", func(s *job.Spec) { s.Sweep.Config.Space = nil }, "search_space: required"},
		{"too many trials", func(s *job.Spec) { s.Sweep.Config.Limits.MaxTotalTrials = 5000 }, "limits.max_total_trials: expected 1..1000"},
		{"a value bash would evaluate", func(s *job.Spec) { s.Command = "echo $(( ${{search_space.lr}} ))" }, "trial.command:"},
		{"two nodes on local", func(s *job.Spec) { s.Resources.InstanceCount = 2 }, "resources.instance_count"},
		{"a choice without values", func(s *job.Spec) { s.Sweep.Config.Space["lr"] = hpo.Expr{Kind: "choice"} }, "search_space.lr"},
		{"a parameter name that is no input name", func(s *job.Spec) {
			s.Sweep.Config.Space["a b"] = hpo.Expr{Kind: "uniform", Low: 0, High: 1}
		}, "search_space.a b: a parameter name holds only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSweepFixture(t)
			sp := sweepSpec(2, 1)
			tt.edit(&sp)
			_, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: sp})
			wantKind(t, err, Invalid, tt.want)
		})
	}
}

// A job that already holds a trial's name does not block the sweep: the trial takes another.
func TestSweepTrialNameTaken(t *testing.T) {
	f := newSweepFixture(t)
	f.create(t, job.Spec{Name: "sw_0"})
	sp := sweepSpec(1, 1)
	sp.Name = "sw"
	f.createSweep(t, sp)
	f.sweepPass(t)
	ts := f.trials(t, "sw")
	if len(ts) != 1 || ts[0].RunID == "sw_0" || !strings.HasPrefix(ts[0].RunID, "sw_0_") || ts[0].Run == nil {
		t.Errorf("trials = %+v, want trial 0 under another name", ts)
	}
}
