package sweep

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func baseConfig() Config {
	return Config{
		Space:     Space{"lr": {Kind: "loguniform", Low: -6, High: -1}, "depth": {Kind: "choice", Values: []any{int64(2), int64(4), int64(8)}}},
		Sampling:  Sampling{Type: "random", Seed: 7},
		Objective: Objective{Metric: "acc", Goal: "maximize"},
		Limits:    Limits{MaxTotalTrials: 5, MaxConcurrentTrials: 2},
	}
}

func withState(ts ...Trial) State {
	return State{Trials: ts, Started: t0, Now: t0.Add(time.Minute)}
}

func running(i int, p Params) Trial {
	return Trial{Index: i, Params: p, State: Running, Started: t0}
}

// TestDecideCounts: how many trials start, and when the sweep is done.
func TestDecideCounts(t *testing.T) {
	p := func(lr float64) Params { return Params{"lr": lr, "depth": int64(2)} }
	tests := []struct {
		name       string
		limits     Limits
		trials     []Trial
		wantStarts int
		wantDone   string
	}{
		{"fills max_concurrent_trials", Limits{MaxTotalTrials: 5, MaxConcurrentTrials: 2}, nil, 2, ""},
		{"a queued and a running trial hold both slots", Limits{MaxTotalTrials: 5, MaxConcurrentTrials: 2},
			[]Trial{running(0, p(0.1)), {Index: 1, Params: p(0.2), State: Queued}}, 0, ""},
		{"an ended trial frees its slot", Limits{MaxTotalTrials: 5, MaxConcurrentTrials: 2},
			[]Trial{running(0, p(0.1)), {Index: 1, Params: p(0.2), State: Failed}}, 1, ""},
		{"a trial being stopped frees its slot", Limits{MaxTotalTrials: 5, MaxConcurrentTrials: 2},
			[]Trial{running(0, p(0.1)), {Index: 1, Params: p(0.2), State: Running, Stopped: "bandit: …"}}, 1, ""},
		{"never past max_total_trials", Limits{MaxTotalTrials: 3, MaxConcurrentTrials: 4},
			[]Trial{{Index: 0, Params: p(0.1), State: Completed}, {Index: 1, Params: p(0.2), State: Completed}}, 1, ""},
		{"max_total_trials reached", Limits{MaxTotalTrials: 2, MaxConcurrentTrials: 4},
			[]Trial{running(0, p(0.1)), {Index: 1, Params: p(0.2), State: Completed}}, 0, "max_total_trials 2 reached"},
		{"concurrency defaults to max_total_trials", Limits{MaxTotalTrials: 3}, nil, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.Limits = tt.limits
			d := Decide(cfg, withState(tt.trials...))
			if len(d.Start) != tt.wantStarts || d.Reason != tt.wantDone || d.Done != (tt.wantDone != "") {
				t.Fatalf("decision %+v, want %d starts, done %q", d, tt.wantStarts, tt.wantDone)
			}
		})
	}
}

// TestDecideTimeouts: the sweep's timeout stops every queued and running trial and ends the
// sweep; a trial's trial_timeout stops it and its slot is refilled at once.
func TestDecideTimeouts(t *testing.T) {
	cfg := baseConfig()
	cfg.Limits.Timeout = 2 * time.Hour
	cfg.Limits.TrialTimeout = 15 * time.Minute
	trials := []Trial{
		{Index: 0, Params: Params{"lr": 0.1}, State: Completed},
		{Index: 1, Params: Params{"lr": 0.2}, State: Running, Started: t0},
		{Index: 2, Params: Params{"lr": 0.3}, State: Queued},
	}
	d := Decide(cfg, State{Trials: trials, Started: t0, Now: t0.Add(2 * time.Hour)})
	want := Decision{Done: true, Reason: "timeout 2h0m0s reached", Stop: []Stop{
		{1, "the sweep's timeout 2h0m0s reached"}, {2, "the sweep's timeout 2h0m0s reached"},
	}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("sweep timeout (-want +got):\n%s", diff)
	}
	trials[1].Started = t0.Add(-time.Minute)
	d = Decide(cfg, State{Trials: trials[:2], Started: t0, Now: t0.Add(15*time.Minute + 30*time.Second)})
	wantStop := []Stop{{1, "trial_timeout 15m0s: running for 16m30s"}}
	if diff := cmp.Diff(wantStop, d.Stop); diff != "" || len(d.Start) != 2 || d.Done {
		t.Errorf("trial timeout: %+v (-want +got stops):\n%s", d, diff)
	}
}

// TestDecideGridOrder: the grid is the product in name order, the last name fastest, each
// choice's values as listed; then it is exhausted.
func TestDecideGridOrder(t *testing.T) {
	cfg := Config{
		Space:     Space{"b": {Kind: "choice", Values: []any{"x", "y", "z"}}, "a": {Kind: "choice", Values: []any{int64(1), int64(2)}}},
		Sampling:  Sampling{Type: "grid"},
		Objective: Objective{Metric: "m", Goal: "minimize"},
		Limits:    Limits{MaxTotalTrials: 100, MaxConcurrentTrials: 10},
	}
	d := Decide(cfg, withState())
	want := []Params{
		{"a": int64(1), "b": "x"}, {"a": int64(1), "b": "y"}, {"a": int64(1), "b": "z"},
		{"a": int64(2), "b": "x"}, {"a": int64(2), "b": "y"}, {"a": int64(2), "b": "z"},
	}
	if diff := cmp.Diff(want, d.Start); diff != "" {
		t.Fatalf("grid (-want +got):\n%s", diff)
	}
	var trials []Trial
	for i, p := range d.Start {
		trials = append(trials, Trial{Index: i, Params: p, State: Completed})
	}
	if d := Decide(cfg, withState(trials...)); !d.Done || d.Reason != "all 6 points of the grid are tried" {
		t.Errorf("after the grid: %+v", d)
	}
}

// TestDecideNoDuplicates: a discrete space never repeats a set, including sets stored as JSON
// (numbers come back as float64), and ends with a reason when it runs out.
func TestDecideNoDuplicates(t *testing.T) {
	cfg := Config{
		Space:     Space{"x": {Kind: "choice", Values: []any{int64(1), int64(2), int64(3)}}, "y": {Kind: "randint", Upper: 2}},
		Sampling:  Sampling{Type: "random", Seed: 1},
		Objective: Objective{Metric: "m", Goal: "maximize"},
		Limits:    Limits{MaxTotalTrials: 100, MaxConcurrentTrials: 1},
	}
	var trials []Trial
	seen := map[string]bool{}
	for i := range 6 {
		d := Decide(cfg, withState(roundTrip(t, trials)...))
		if len(d.Start) != 1 {
			t.Fatalf("trial %d: %+v", i, d)
		}
		k := key(d.Start[0])
		if seen[k] {
			t.Fatalf("trial %d repeats %v", i, d.Start[0])
		}
		seen[k] = true
		trials = append(trials, Trial{Index: i, Params: d.Start[0], State: Completed})
	}
	d := Decide(cfg, withState(roundTrip(t, trials)...))
	if !d.Done || d.Reason != "all 6 parameter sets of the search space are tried" || len(d.Start) != 0 {
		t.Errorf("exhausted: %+v", d)
	}
	// A space of three q values is not counted, but drawing runs out all the same.
	cfg.Space = Space{"q": {Kind: "quniform", Low: 0, High: 1, Q: 0.5}}
	trials = []Trial{{Index: 0, Params: Params{"q": 0.0}}, {Index: 1, Params: Params{"q": 0.5}}, {Index: 2, Params: Params{"q": 1.0}}}
	if d := Decide(cfg, withState(trials...)); !d.Done || d.Reason != "no untried parameter set in 64 draws: the search space is exhausted" {
		t.Errorf("q space: %+v", d)
	}
}

// roundTrip stores and loads the trials as the runner does, so int64 values become float64.
func roundTrip(t *testing.T, trials []Trial) []Trial {
	t.Helper()
	b, err := json.Marshal(trials)
	if err != nil {
		t.Fatal(err)
	}
	var out []Trial
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDecideRestart: trial n gets the same parameters whether trials are started together, one
// per decision, or after the history went through storage (a server restart), for every
// sampler, bayesian included once its model is in use.
func TestDecideRestart(t *testing.T) {
	space := Space{
		"lr": {Kind: "loguniform", Low: -6, High: -1}, "depth": {Kind: "choice", Values: []any{int64(2), int64(4), int64(8)}},
		"units": {Kind: "randint", Upper: 512}, "drop": {Kind: "qnormal", Mu: 0.3, Sigma: 0.1, Q: 0.05},
	}
	for _, s := range []Sampling{{Type: "random", Seed: 11}, {Type: "random", Rule: "sobol", Seed: 11}, {Type: "bayesian", Seed: 11}} {
		t.Run(s.Type+s.Rule, func(t *testing.T) {
			cfg := Config{Space: space, Sampling: s, Objective: Objective{Metric: "m", Goal: "maximize"}, Limits: Limits{MaxTotalTrials: 30, MaxConcurrentTrials: 3}}
			var trials []Trial
			for len(trials) < 24 {
				d := Decide(cfg, withState(trials...))
				stored := Decide(cfg, withState(roundTrip(t, trials)...))
				if diff := cmp.Diff(keys(d.Start), keys(stored.Start)); diff != "" {
					t.Fatalf("after %d trials, the stored history decides differently (-live +stored):\n%s", len(trials), diff)
				}
				one := cfg
				one.Limits.MaxConcurrentTrials = 1
				first := Decide(one, withState(trials...))
				if len(first.Start) != 1 || key(first.Start[0]) != key(d.Start[0]) {
					t.Fatalf("trial %d: %v alone, %v in a batch", len(trials), first.Start, d.Start[0])
				}
				for _, p := range d.Start {
					i := len(trials)
					trials = append(trials, Trial{Index: i, Params: p, State: Completed, Metrics: []Point{{Step: 1, Value: float64(i % 7)}}})
				}
			}
		})
	}
}

func keys(ps []Params) []string {
	var ks []string
	for _, p := range ps {
		ks = append(ks, key(p))
	}
	return ks
}

// TestDecideInvalid: a bad config ends the sweep with the field at fault.
func TestDecideInvalid(t *testing.T) {
	cfg := baseConfig()
	cfg.Space["lr"] = Expr{Kind: "uniform", Low: 2, High: 1}
	d := Decide(cfg, withState())
	if !d.Done || d.Reason != "invalid sweep: search_space.lr.max_value: 1 is below min_value 2" {
		t.Errorf("decision %+v", d)
	}
}

// TestDecidePolicyStops: the policy's stops come with the decision and free their slots.
func TestDecidePolicyStops(t *testing.T) {
	cfg := baseConfig()
	cfg.Termination = &Termination{Type: "bandit", SlackAmount: 0.1}
	a, b := series(0, Running, 0.9), series(1, Running, 0.5)
	a.Params, b.Params = Params{"lr": 0.1}, Params{"lr": 0.2}
	d := Decide(cfg, withState(a, b))
	if len(d.Stop) != 1 || d.Stop[0].Index != 1 || len(d.Start) != 1 {
		t.Errorf("decision %+v, want trial 1 stopped and one start", d)
	}
	// Once every trial is created the policy still applies to those running.
	cfg.Limits.MaxTotalTrials = 2
	d = Decide(cfg, withState(a, b))
	if len(d.Stop) != 1 || d.Stop[0].Index != 1 || !d.Done || len(d.Start) != 0 {
		t.Errorf("decision %+v, want trial 1 stopped and the sweep done", d)
	}
}

// TestBest: the last report counts, ties go to the lower index, trials without reports and
// NaN values lose.
func TestBest(t *testing.T) {
	nan := series(4, Completed, 9, 0)
	nan.Metrics[1].Value = nan.Metrics[1].Value / nan.Metrics[1].Value // NaN
	trials := []Trial{
		series(3, Completed, 0.1, 0.7), series(1, Completed, 0.95, 0.7), series(2, Running, 0.6),
		{Index: 0, State: Completed}, nan,
	}
	cfg := Config{Objective: Objective{Metric: "acc", Goal: "Maximize"}}
	if b, ok := Best(cfg, trials); !ok || b.Index != 1 {
		t.Errorf("maximize: best %d, %v; want trial 1 (0.7, tied with 3, lower index)", b.Index, ok)
	}
	cfg.Objective.Goal = "minimize"
	if b, ok := Best(cfg, trials); !ok || b.Index != 2 {
		t.Errorf("minimize: best %d, %v; want trial 2", b.Index, ok)
	}
	if _, ok := Best(cfg, []Trial{{Index: 0}}); ok {
		t.Error("a best among trials that never reported")
	}
}
