package sweep

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParzenByHand: one good point at 0.2, one bad at 0.8, one parameter. The bandwidth is
// 0.2·2^(-1/5) = 0.174110; the good kernel's mass on [0,1] is Φ(0.8/σ) − Φ(−0.2/σ) = 0.874656,
// so l(0.2) = (1 + φ(0)/(σ·0.874656))/2 = (1 + 2.619668)/2 = 1.809834, and by symmetry
// l(0.5) = g(0.5), a score of exactly 0.
func TestParzenByHand(t *testing.T) {
	l := newParzen([]float64{0.2}, 0, 1)
	g := newParzen([]float64{0.8}, 0, 1)
	if math.Abs(l.sigma-0.174110) > 1e-6 {
		t.Errorf("sigma = %g, want 0.174110", l.sigma)
	}
	for _, c := range []struct {
		p    parzen
		u    float64
		want float64
	}{{l, 0.2, 1.809839}, {l, 0.1, 1.610673}, {g, 0.2, 0.503455}, {l, 0.5, 0.796846}, {g, 0.5, 0.796846}} {
		if got := c.p.pdf(c.u); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("pdf(%g) = %.6f, want %.6f", c.u, got, c.want)
		}
	}
	// The scores log l − log g: 0.2 → 1.2795, 0.1 → 1.1690 (farther from the bad point than
	// 0.3, whose g is 0.5212 against 0.1's 0.5004), 0.3 → 1.1283, 0.5 → 0, 0.9 → −1.1690.
	m := tpeModel{l: []parzen{l}, g: []parzen{g}}
	got := m.rank([][]float64{{0.9}, {0.5}, {0.3}, {0.1}, {0.2}})
	want := [][]float64{{0.2}, {0.1}, {0.3}, {0.5}, {0.9}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rank (-want +got):\n%s", diff)
	}
}

// TestParzenChoice: a choice's kernel is its option. With one good observation of option 0
// among 3, l gives option 0 (1/3 + 1)/2 = 2/3 and the others (1/3)/2 = 1/6 each; sampling only
// ever returns slot centres or prior draws.
func TestParzenChoice(t *testing.T) {
	p := newParzen([]float64{1.0 / 6}, 3, 1)
	for _, c := range []struct{ u, mass float64 }{{0.1, 2.0 / 3}, {0.5, 1.0 / 6}, {0.9, 1.0 / 6}} {
		if got := p.pdf(c.u) / 3; math.Abs(got-c.mass) > 1e-12 {
			t.Errorf("mass of the option at %g = %g, want %g", c.u, got, c.mass)
		}
	}
}

// TestSplitObservations: the good side is the best ceil(0.25·n), ties to the lower index.
func TestSplitObservations(t *testing.T) {
	var obs []observation
	for i, s := range []float64{1, 5, 3, 5, 2, 0, 4, 2} {
		obs = append(obs, observation{u: []float64{0}, score: s, index: i})
	}
	good, bad := splitObservations(obs)
	if len(good) != 2 || good[0].index != 1 || good[1].index != 3 || len(bad) != 6 {
		t.Fatalf("good = %+v, bad %d", good, len(bad))
	}
}

// TestBayesianLearns: on a 1-D objective peaked at x = 0.3, with the first 10 trials random
// and complete, the bayesian trials draw near the peak far more often than random ones do.
// Deterministic for the seed: the check is that the model is used, not a statistical claim.
func TestBayesianLearns(t *testing.T) {
	cfg := Config{
		Space:     Space{"x": {Kind: "uniform", Low: 0, High: 1}},
		Sampling:  Sampling{Type: "bayesian", Seed: 3},
		Objective: Objective{Metric: "acc", Goal: "maximize"},
		Limits:    Limits{MaxTotalTrials: 40, MaxConcurrentTrials: 1},
	}
	f := func(x float64) float64 { return -(x - 0.3) * (x - 0.3) }
	var trials []Trial
	near := 0
	for i := range 40 {
		d := Decide(cfg, State{Trials: trials})
		if len(d.Start) != 1 {
			t.Fatalf("trial %d: decision %+v", i, d)
		}
		x := d.Start[0]["x"].(float64)
		if i >= tpeStartup && math.Abs(x-0.3) < 0.1 {
			near++
		}
		trials = append(trials, Trial{Index: i, Params: d.Start[0], State: Completed, Metrics: []Point{{Step: 1, Value: f(x)}}})
	}
	// Random draws land within 0.1 of 0.3 a fifth of the time: 6 of 30.
	if near < 18 {
		t.Errorf("%d of 30 model-based trials within 0.1 of the optimum, want at least 18", near)
	}
}

// TestBayesianStartup: before tpeStartup observations, a bayesian trial is the random one.
func TestBayesianStartup(t *testing.T) {
	space := Space{"x": {Kind: "uniform", Low: 0, High: 1}, "c": {Kind: "choice", Values: []any{"a", "b"}}}
	rnd := Config{Space: space, Sampling: Sampling{Type: "random", Seed: 3}, Objective: Objective{Metric: "m", Goal: "minimize"}, Limits: Limits{MaxConcurrentTrials: 1}}
	bay := rnd
	bay.Sampling.Type = "bayesian"
	var trials []Trial
	for i := range tpeStartup - 1 {
		p := Decide(rnd, State{Trials: trials}).Start[0]
		trials = append(trials, Trial{Index: i, Params: p, State: Completed, Metrics: []Point{{Value: float64(i)}}})
	}
	if got, want := Decide(bay, State{Trials: trials}).Start, Decide(rnd, State{Trials: trials}).Start; !cmp.Equal(got, want) {
		t.Errorf("with %d observations bayesian drew %v, random %v", len(trials), got, want)
	}
	trials = append(trials, Trial{Index: 9, Params: Params{"x": 0.5, "c": "a"}, State: Completed, Metrics: []Point{{Value: 9}}})
	if got, want := Decide(bay, State{Trials: trials}).Start, Decide(rnd, State{Trials: trials}).Start; cmp.Equal(got, want) {
		t.Errorf("with %d observations bayesian still draws as random: %v", len(trials), got)
	}
}
