package sweep

import (
	"testing"
)

// TestObservationsASHA: with asha, the bayesian model learns from the highest level that
// tpeStartup trials reached, at that level's report. Twelve trials reached rung 0 (1 report),
// ten of them rung 1 (3 reports), two max_resource (9): the model fits on rung 1, by each
// trial's third report.
func TestObservationsASHA(t *testing.T) {
	cfg := Config{
		Space:       Space{"x": {Kind: "uniform", Low: 0, High: 1}},
		Objective:   Objective{Metric: "m", Goal: "maximize"},
		Termination: &Termination{Type: "asha", MinResource: 1, ReductionFactor: 3, MaxResource: 9},
	}
	var trials []Trial
	for i := range 12 {
		n := 1
		switch {
		case i < 2:
			n = 9
		case i < 10:
			n = 3
		}
		tr := Trial{Index: i, Params: Params{"x": float64(i) / 12}, State: Running}
		for k := range n {
			tr.Metrics = append(tr.Metrics, Point{Step: int64(k), Value: float64(100*i + k)})
		}
		trials = append(trials, tr)
	}
	obs := observations(cfg, []string{"x"}, trials)
	if len(obs) != 10 {
		t.Fatalf("%d observations, want the 10 trials at rung 1", len(obs))
	}
	for _, o := range obs {
		if want := float64(100*o.index + 2); o.score != want {
			t.Errorf("trial %d scored %g, want its third report %g", o.index, o.score, want)
		}
	}
	// Without asha only ended trials count, by their last report.
	cfg.Termination = nil
	trials[0].State, trials[11].State = Completed, Canceled
	obs = observations(cfg, []string{"x"}, trials)
	if len(obs) != 2 || obs[0].score != 8 || obs[1].score != 1100 {
		t.Errorf("observations %+v, want trials 0 (8) and 11 (1100)", obs)
	}
}
