package cli

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// job show of a sweep lists its trials with their parameters, metric and why one was stopped,
// and marks the best; job show of a trial names its sweep and the stop reason.
func TestShowSweepAndTrial(t *testing.T) {
	best, bad := 0.93, 0.1
	d := &api.RunDetail{Run: job.Run{ID: "sw", Status: job.Completed}, Sweep: &api.SweepDetail{
		Metric: "acc", Goal: "maximize", Sampling: "random", EarlyTermination: "bandit",
		MaxTotalTrials: 2, MaxConcurrentTrials: 2, BestChildRunID: "sw_0", BestMetric: &best,
		BestParams: []byte(`{"lr":0.01,"opt":"adam"}`), DoneReason: "max_total_trials 2 reached",
		Trials: []api.SweepTrial{
			{Index: 0, RunID: "sw_0", Status: job.Completed, Params: []byte(`{"lr":0.01,"opt":"adam"}`), Metric: &best},
			{Index: 1, RunID: "sw_1", Status: job.Canceled, Params: []byte(`{"lr":0.5,"opt":"sgd"}`), Metric: &bad,
				Stopped: "bandit: 0.1 at report 1 (step 0) is outside slack_factor 0.1"},
		}}}
	var b strings.Builder
	if err := showJob(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Objective:", "maximize acc", "Early termination: bandit", "Best trial:", "sw_0  acc = 0.93",
		"Best params:", "lr=0.01 opt=adam", "Sweep done:", "max_total_trials 2 reached", "Trials:",
		"sw_0 *", "sw_1 ", "Canceled", "lr=0.5 opt=sgd", "bandit: 0.1 at report 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("job show lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	trial := &api.RunDetail{Run: job.Run{ID: "sw_1", Status: job.Canceled},
		TrialOf: &api.TrialOf{Sweep: "sw", Index: 1, Stopped: "bandit: 0.1 at report 1"}}
	if err := showJob(&b, trial); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "sw (trial 1)") || !strings.Contains(out, "Stopped by sweep: bandit: 0.1 at report 1") {
		t.Errorf("job show of a trial lacks its sweep or why it stopped:\n%s", out)
	}
}
