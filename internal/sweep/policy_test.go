package sweep

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// series builds a trial with reports at steps 1, 2, ...
func series(i int, state TrialState, vs ...float64) Trial {
	t := Trial{Index: i, State: state, Params: Params{"i": int64(i)}}
	for k, v := range vs {
		t.Metrics = append(t.Metrics, Point{Step: int64(k + 1), Value: v})
	}
	return t
}

func stopsOf(term Termination, goal string, trials ...Trial) []Stop {
	return policyStops(Config{Objective: Objective{Metric: "m", Goal: goal}, Termination: &term}, trials)
}

func TestBandit(t *testing.T) {
	tests := []struct {
		name   string
		term   Termination
		goal   string
		trials []Trial
		want   []Stop
	}{{
		// At report 2 the best is trial 0's 0.72; 0.72/1.1 = 0.6545: trial 1's 0.6 is out,
		// trial 2's 0.66 is in. Trial 4 has one report, before delay_evaluation 2.
		name: "slack_factor, maximize",
		term: Termination{Type: "bandit", SlackFactor: 0.1, EvaluationInterval: 1, DelayEvaluation: 2},
		goal: "maximize",
		trials: []Trial{
			series(0, Running, 0.5, 0.72), series(1, Running, 0.4, 0.6), series(2, Running, 0.6, 0.66),
			series(3, Completed, 0.3, 0.70, 0.8), series(4, Running, 0.1),
		},
		want: []Stop{{1, "bandit: 0.6 at report 2 (step 2) is outside slack_factor 0.1 of the best 0.72 (trial 0): the bound is 0.6545"}},
	}, {
		// Minimize, slack_amount 0.05: the best at report 1 is 1.0, the bound 1.05.
		name:   "slack_amount, minimize",
		term:   Termination{Type: "bandit", SlackAmount: 0.05},
		goal:   "minimize",
		trials: []Trial{series(0, Running, 1.0), series(1, Running, 1.04), series(2, Running, 1.06)},
		want:   []Stop{{2, "bandit: 1.06 at report 1 (step 1) is outside slack_amount 0.05 of the best 1 (trial 0): the bound is 1.05"}},
	}, {
		// evaluation_interval 2: trial 1 with three reports is judged at report 2, where it
		// was 0.5 against the best 0.9; its good third report does not save it.
		name:   "judged at the last multiple of the interval",
		term:   Termination{Type: "bandit", SlackFactor: 0.2, EvaluationInterval: 2},
		goal:   "maximize",
		trials: []Trial{series(0, Completed, 0.9, 0.9), series(1, Running, 0.5, 0.5, 0.99)},
		want:   []Stop{{1, "bandit: 0.5 at report 2 (step 2) is outside slack_factor 0.2 of the best 0.9 (trial 0): the bound is 0.75"}},
	}, {
		name:   "a trial already being stopped is left alone",
		term:   Termination{Type: "bandit", SlackFactor: 0.1},
		goal:   "maximize",
		trials: []Trial{series(0, Completed, 0.9), {Index: 1, State: Running, Stopped: "user", Metrics: []Point{{Step: 1, Value: 0.1}}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, stopsOf(tt.term, tt.goal, tt.trials...)); diff != "" {
				t.Errorf("stops (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMedianStopping, maximize, at report 2: trial 0's best 0.2 against the others' running
// averages 0.6 (1), 0.4 (2), 0.3 (3), median 0.4: stopped. Trial 3's best 0.4 against 0.15, 0.6,
// 0.4: the median 0.4 is not better, it runs on. Trial 2, at report 3, has no peer there.
func TestMedianStopping(t *testing.T) {
	trials := []Trial{
		series(0, Running, 0.1, 0.2), series(1, Completed, 0.5, 0.7),
		series(2, Running, 0.3, 0.5, 0.9), series(3, Running, 0.2, 0.4),
	}
	want := []Stop{{0, "median_stopping: the best 0.2 by report 2 (step 2) is worse than the median 0.4 of 3 other trials' running averages"}}
	if diff := cmp.Diff(want, stopsOf(Termination{Type: "median_stopping"}, "maximize", trials...)); diff != "" {
		t.Errorf("stops (-want +got):\n%s", diff)
	}
	// Minimize mirrors it: trial 0's lowest 0.1 and trial 3's 0.2 both beat the median 0.4.
	if got := stopsOf(Termination{Type: "median_stopping"}, "minimize", trials...); len(got) != 0 {
		t.Errorf("minimize: stops %+v, want none", got)
	}
}

// TestTruncationSelection: 25% of 4 trials at report 1 is one trial, the worst.
func TestTruncationSelection(t *testing.T) {
	term := Termination{Type: "truncation_selection", TruncationPercentage: 25}
	running := []Trial{series(0, Running, 0.9), series(1, Running, 0.5), series(2, Running, 0.7), series(3, Running, 0.3)}
	want := []Stop{{3, "truncation_selection: 0.3 at report 1 (step 1) ranks 4 of 4, in the lowest 25% (1 trials)"}}
	if diff := cmp.Diff(want, stopsOf(term, "maximize", running...)); diff != "" {
		t.Errorf("stops (-want +got):\n%s", diff)
	}
	// When the worst has completed, it takes the cut: no running trial is stopped.
	ended := append(running[:3:3], series(3, Completed, 0.3))
	if got := stopsOf(term, "maximize", ended...); len(got) != 0 {
		t.Errorf("stops %+v, want none", got)
	}
	// 25% of 3 trials rounds down to none.
	if got := stopsOf(term, "maximize", running[:3]...); len(got) != 0 {
		t.Errorf("3 trials: stops %+v, want none", got)
	}
}

// TestASHA: rungs at 1 and 3 reports (min 1, eta 3, max 9). At rung 0 five trials: 0.6 (2),
// 0.5 (0), 0.4 (1), 0.3 (3), 0.1 (4); the top max(1, 5/3) = 1 continues, so trial 1 stops.
// Trial 3 has moved on to rung 1 (3 reports): there 0.8 (0), 0.7 (3), 0.1 (4), it ranks 2 of 3
// and stops. Trial 4 has 9 reports, max_resource: it completes whatever it ranks.
func TestASHA(t *testing.T) {
	term := Termination{Type: "asha", MinResource: 1, ReductionFactor: 3, MaxResource: 9}
	nine := series(4, Running, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1)
	trials := []Trial{
		series(0, Completed, 0.5, 0.6, 0.8, 0.9), series(1, Running, 0.4), series(2, Running, 0.6),
		series(3, Running, 0.3, 0.5, 0.7), nine,
	}
	want := []Stop{
		{1, "asha: 0.4 at rung 0 (report 1 (step 1)) ranks 3 of 5; only the top 1 (1/3) continue"},
		{3, "asha: 0.7 at rung 1 (report 3 (step 3)) ranks 2 of 3; only the top 1 (1/3) continue"},
	}
	if diff := cmp.Diff(want, stopsOf(term, "maximize", trials...)); diff != "" {
		t.Errorf("stops (-want +got):\n%s", diff)
	}
	if got := rungs(term.asha()); !cmp.Equal(got, []int{1, 3}) {
		t.Errorf("rungs = %v, want [1 3]", got)
	}
	if got := rungs(Termination{MinResource: 2, ReductionFactor: 2, MaxResource: 20}); !cmp.Equal(got, []int{2, 4, 8, 16}) {
		t.Errorf("rungs = %v, want [2 4 8 16]", got)
	}
}

func TestEvaluationPoint(t *testing.T) {
	tests := []struct{ n, interval, delay, want int }{
		{0, 1, 0, -1}, {1, 0, 0, 1}, {5, 2, 0, 4}, {5, 2, 5, -1}, {6, 2, 5, 6}, {3, 1, 3, 3},
	}
	for _, tt := range tests {
		e, ok := evaluationPoint(tt.n, tt.interval, tt.delay)
		if !ok {
			e = -1
		}
		if e != tt.want {
			t.Errorf("evaluationPoint(%d, %d, %d) = %d, want %d", tt.n, tt.interval, tt.delay, e, tt.want)
		}
	}
}
