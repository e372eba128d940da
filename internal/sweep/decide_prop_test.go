package sweep

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestDecideProperties drives random sweeps (sampler, policy, limits, trials ending or stopped
// at random) and checks at every decision: the same input decides the same; never more trials
// queued or running than max_concurrent_trials, nor created than max_total_trials; never a
// parameter set twice; only queued or running trials stopped, each with a reason; and the sweep
// ends with a reason.
func TestDecideProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := Config{
			Space: Space{
				"c": {Kind: "choice", Values: []any{int64(1), int64(2), int64(3)}},
				"r": {Kind: "randint", Upper: int64(rapid.IntRange(1, 4).Draw(rt, "upper"))},
			},
			Sampling:  Sampling{Type: rapid.SampledFrom([]string{"random", "grid", "bayesian"}).Draw(rt, "sampling"), Seed: rapid.Int64().Draw(rt, "seed")},
			Objective: Objective{Metric: "m", Goal: rapid.SampledFrom([]string{"maximize", "minimize"}).Draw(rt, "goal")},
			Limits:    Limits{MaxTotalTrials: rapid.IntRange(1, 30).Draw(rt, "total"), MaxConcurrentTrials: rapid.IntRange(0, 5).Draw(rt, "conc")},
		}
		if cfg.Sampling.Type == "grid" {
			cfg.Space["r"] = Expr{Kind: "choice", Values: []any{"a", "b"}}
		} else if rapid.Bool().Draw(rt, "continuous") {
			cfg.Space["u"] = Expr{Kind: "quniform", Low: 0, High: 2, Q: 0.5}
		}
		switch rapid.IntRange(0, 4).Draw(rt, "policy") {
		case 1:
			cfg.Termination = &Termination{Type: "bandit", SlackFactor: 0.1}
		case 2:
			cfg.Termination = &Termination{Type: "median_stopping"}
		case 3:
			cfg.Termination = &Termination{Type: "truncation_selection", TruncationPercentage: 30}
		case 4:
			cfg.Termination = &Termination{Type: "asha", MaxResource: 9}
		}
		limit, _ := trialLimit(cfg)
		conc := concurrency(cfg, limit)
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var trials []Trial
		seen := map[string]bool{}
		for step := range 1000 {
			st := State{Trials: trials, Started: start, Now: start.Add(time.Duration(step) * time.Minute)}
			d := Decide(cfg, st)
			if again := Decide(cfg, st); fmt.Sprint(again) != fmt.Sprint(d) {
				rt.Fatalf("step %d: %v then %v", step, d, again)
			}
			if d.Done && (d.Reason == "" || len(d.Start) > 0) {
				rt.Fatalf("step %d: done %+v", step, d)
			}
			for _, s := range d.Stop {
				tr := trials[s.Index]
				if s.Reason == "" || (tr.State != Running && tr.State != Queued) || tr.Stopped != "" {
					rt.Fatalf("step %d: stop %+v of %+v", step, s, tr)
				}
				trials[s.Index].State, trials[s.Index].Stopped = Canceled, s.Reason
			}
			for _, p := range d.Start {
				k := key(p)
				if seen[k] {
					rt.Fatalf("step %d: %v again", step, p)
				}
				seen[k] = true
				trials = append(trials, Trial{Index: len(trials), Params: p, State: Queued})
			}
			active := 0
			for i := range trials {
				tr := &trials[i]
				switch {
				case tr.State == Queued:
					tr.State, tr.Started = Running, st.Now
				case tr.State == Running && rapid.IntRange(0, 9).Draw(rt, "ends") == 0:
					tr.State = Completed
				case tr.State == Running:
					tr.Metrics = append(tr.Metrics, Point{Step: int64(len(tr.Metrics)), Value: rapid.Float64Range(0, 1).Draw(rt, "v")})
				}
				if tr.State == Running {
					active++
				}
			}
			if active > conc {
				rt.Fatalf("step %d: %d running, max_concurrent_trials %d", step, active, conc)
			}
			if m := cfg.Limits.MaxTotalTrials; m > 0 && len(trials) > m {
				rt.Fatalf("%d trials, max_total_trials %d", len(trials), m)
			}
			if d.Done && active == 0 {
				return
			}
		}
		rt.Fatalf("the sweep did not end in 1000 steps: %d trials", len(trials))
	})
}
