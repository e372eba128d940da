package bench

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/sweep"
)

// SweepOptions size the sweep group.
type SweepOptions struct {
	Trials  int // max_total_trials, the same budget for every method
	Seeds   int // seeds per method and objective
	Workers int // max_concurrent_trials
	Reports int // reports of the primary metric in a full trial (max_resource)
}

// The sweep group drives sweep.Decide directly with a simulated clock: no server, no process.
// A trial reports its objective once per time unit, along a learning curve
// f(x) + amplitude·e^(−t/τ) + noise, with τ drawn per trial (so that curves cross and an early
// leader is not always the final one), and completes after Reports reports. Trial-time is the
// number of reports all trials made, in units of one full trial. Each method gets the same
// objectives, seeds and max_total_trials.

// objective is a synthetic function to minimize, with a known optimum.
type objective struct {
	name      string
	space     sweep.Space
	f         func(sweep.Params) float64
	optimum   float64
	amplitude float64 // of the learning curve's transient
	noise     float64 // standard deviation of a report's noise
}

func num64(p sweep.Params, k string) float64 {
	switch v := p[k].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	return math.NaN()
}

func objectives() []objective {
	branin := func(p sweep.Params) float64 {
		x1, x2 := num64(p, "x1"), num64(p, "x2")
		b, c, t := 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 1/(8*math.Pi)
		return math.Pow(x2-b*x1*x1+c*x1-6, 2) + 10*(1-t)*math.Cos(x1) + 10
	}
	h6 := sweep.Space{}
	for d := 1; d <= 6; d++ {
		h6[fmt.Sprintf("x%d", d)] = sweep.Expr{Kind: "uniform", Low: 0, High: 1}
	}
	return []objective{
		{name: "Branin (2-D, optimum 0.397887)", optimum: 0.397887, amplitude: 10, noise: 0.02,
			space: sweep.Space{"x1": {Kind: "uniform", Low: -5, High: 10}, "x2": {Kind: "uniform", Low: 0, High: 15}},
			f:     branin},
		{name: "Hartmann-6 (6-D, optimum −3.32237)", optimum: -3.32237, amplitude: 1, noise: 0.01, space: h6, f: hartmann6},
		{name: "mixed quadratic (loguniform, quniform, choice, uniform; optimum 0)", optimum: 0, amplitude: 1, noise: 0.01,
			space: sweep.Space{
				"lr":      {Kind: "loguniform", Low: -9, High: -1},
				"width":   {Kind: "quniform", Low: 16, High: 256, Q: 16},
				"opt":     {Kind: "choice", Values: []any{"sgd", "adam", "rmsprop"}},
				"dropout": {Kind: "uniform", Low: 0, High: 0.5},
			},
			f: func(p sweep.Params) float64 {
				pen := map[any]float64{"sgd": 0.3, "adam": 0, "rmsprop": 0.1}[p["opt"]]
				return math.Pow((math.Log(num64(p, "lr"))+5)/4, 2) + math.Pow((num64(p, "width")-128)/128, 2) +
					pen + 4*math.Pow(num64(p, "dropout")-0.2, 2)
			}},
	}
}

var (
	h6alpha = [4]float64{1.0, 1.2, 3.0, 3.2}
	h6A     = [4][6]float64{{10, 3, 17, 3.5, 1.7, 8}, {0.05, 10, 17, 0.1, 8, 14}, {3, 3.5, 1.7, 10, 17, 8}, {17, 8, 0.05, 10, 0.1, 14}}
	h6P     = [4][6]float64{{1312, 1696, 5569, 124, 8283, 5886}, {2329, 4135, 8307, 3736, 1004, 9991}, {2348, 1451, 3522, 2883, 3047, 6650}, {4047, 8828, 8732, 5743, 1091, 381}}
)

func hartmann6(p sweep.Params) float64 {
	s := 0.0
	for i := range 4 {
		in := 0.0
		for j := range 6 {
			x := num64(p, fmt.Sprintf("x%d", j+1))
			in += h6A[i][j] * math.Pow(x-h6P[i][j]*1e-4, 2)
		}
		s += h6alpha[i] * math.Exp(-in)
	}
	return -s
}

// method is a sampler with an optional termination policy.
type method struct {
	name     string
	sampling string
	rule     string
	term     func(o SweepOptions, obj objective) *sweep.Termination
	// times multiplies max_total_trials (0: 1), to give successive halving about random
	// search's trial-time instead of its trial count.
	times int
}

func methods() []method {
	delayed := func(t sweep.Termination) func(SweepOptions, objective) *sweep.Termination {
		return func(_ SweepOptions, obj objective) *sweep.Termination {
			t.EvaluationInterval, t.DelayEvaluation = 1, 3
			if t.Type == "bandit" {
				// slack_amount, not slack_factor: a factor is meaningless around Hartmann's
				// negative values.
				t.SlackAmount = 0.1 * obj.amplitude
			}
			return &t
		}
	}
	asha := func(o SweepOptions, _ objective) *sweep.Termination {
		return &sweep.Termination{Type: "asha", MinResource: 1, ReductionFactor: 3, MaxResource: o.Reports}
	}
	return []method{
		{name: "random", sampling: "random"},
		{name: "random, rule sobol", sampling: "random", rule: "sobol"},
		{name: "bayesian (TPE)", sampling: "bayesian"},
		{name: "successive halving (random + asha)", sampling: "random", term: asha},
		{name: "model-based successive halving (bayesian + asha)", sampling: "bayesian", term: asha},
		{name: "successive halving, 8× the trials", sampling: "random", term: asha, times: 8},
		{name: "model-based successive halving, 8× the trials", sampling: "bayesian", term: asha, times: 8},
		{name: "random + bandit (slack_amount 0.1·amplitude, delay 3)", sampling: "random", term: delayed(sweep.Termination{Type: "bandit"})},
		{name: "random + median_stopping (delay 3)", sampling: "random", term: delayed(sweep.Termination{Type: "median_stopping"})},
		{name: "random + truncation_selection 25% (delay 3)", sampling: "random", term: delayed(sweep.Termination{Type: "truncation_selection", TruncationPercentage: 25})},
	}
}

// outcome is one simulated sweep.
type outcome struct {
	regret float64   // of the trial sweep.Best picks, by its noise-free final value
	curve  []float64 // best-so-far regret of completed trials after each report of trial-time
	spent  int       // reports made in all
}

// simulate runs one sweep to its end.
func simulate(obj objective, m method, seed int64, o SweepOptions) (outcome, error) {
	cfg := sweep.Config{
		Space:     obj.space,
		Sampling:  sweep.Sampling{Type: m.sampling, Rule: m.rule, Seed: seed},
		Objective: sweep.Objective{Metric: "loss", Goal: "minimize"},
		Limits:    sweep.Limits{MaxTotalTrials: o.Trials * max(m.times, 1), MaxConcurrentTrials: o.Workers},
	}
	if m.term != nil {
		cfg.Termination = m.term(o, obj)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var trials []sweep.Trial
	var taus []float64
	var rngs []*rand.Rand
	final := func(i int) float64 {
		return obj.f(trials[i].Params) + obj.amplitude*math.Exp(-float64(o.Reports)/taus[i])
	}
	var out outcome
	best := math.Inf(1)
	for step := 0; ; step++ {
		if step > o.Trials*max(m.times, 1)*o.Reports+10 {
			return out, fmt.Errorf("%s, seed %d: the sweep did not end", m.name, seed)
		}
		now := start.Add(time.Duration(step) * time.Minute)
		d := sweep.Decide(cfg, sweep.State{Trials: trials, Started: start, Now: now})
		for _, s := range d.Stop {
			trials[s.Index].State, trials[s.Index].Stopped, trials[s.Index].Ended = sweep.Canceled, s.Reason, now
		}
		for _, p := range d.Start {
			i := len(trials)
			r := rand.New(rand.NewPCG(uint64(seed), uint64(i)+1<<32))
			rngs = append(rngs, r)
			taus = append(taus, float64(o.Reports)*(1.0/15+r.Float64()*(1.0/6-1.0/15)))
			trials = append(trials, sweep.Trial{Index: i, Params: p, State: sweep.Running, Started: now})
		}
		active := 0
		for i := range trials {
			t := &trials[i]
			if t.State != sweep.Running {
				continue
			}
			active++
			k := len(t.Metrics) + 1
			v := obj.f(t.Params) + obj.amplitude*math.Exp(-float64(k)/taus[i]) + obj.noise*rngs[i].NormFloat64()
			t.Metrics = append(t.Metrics, sweep.Point{Step: int64(k), Value: v})
			out.spent++
			if k == o.Reports {
				t.State, t.Ended = sweep.Completed, now
				best = math.Min(best, final(i)-obj.optimum)
			}
			out.curve = append(out.curve, best)
		}
		if active == 0 && len(d.Start) == 0 {
			break
		}
	}
	b, ok := sweep.Best(cfg, trials)
	if !ok {
		return out, fmt.Errorf("%s, seed %d: no trial reported", m.name, seed)
	}
	out.regret = final(b.Index) - obj.optimum
	return out, nil
}

// summary is a method's figures on one objective, over the seeds.
type summary struct {
	regret, auc, spent, reach []float64 // per seed; reach NaN when never reached
}

// Sweeps runs every method on every objective and writes one table per objective.
func Sweeps(w io.Writer, o SweepOptions) error {
	ms := methods()
	for _, obj := range objectives() {
		base := make([]outcome, o.Seeds)
		sums := make([]summary, len(ms))
		start := time.Now()
		for k, m := range ms {
			for s := range o.Seeds {
				out, err := simulate(obj, m, int64(s+1), o)
				if err != nil {
					return fmt.Errorf("%s: %w", obj.name, err)
				}
				if k == 0 {
					base[s] = out
				}
				budget := o.Trials * o.Reports
				target := base[s].curve[len(base[s].curve)-1]
				sums[k].regret = append(sums[k].regret, out.regret)
				sums[k].auc = append(sums[k].auc, area(out.curve, budget, startRegret(base[s].curve)))
				sums[k].spent = append(sums[k].spent, float64(out.spent)/float64(o.Reports))
				sums[k].reach = append(sums[k].reach, reachAt(out.curve, target)/float64(base[s].spent))
			}
		}
		writeSweepTable(w, obj, ms, sums, o, time.Since(start))
	}
	return nil
}

// startRegret stands for "no trial completed yet" in the area: the worst best-so-far random
// search had once it had one.
func startRegret(curve []float64) float64 {
	for _, v := range curve {
		if !math.IsInf(v, 1) {
			return v
		}
	}
	return math.NaN()
}

// area is the mean best-so-far regret over the first budget reports of trial-time (random
// search's whole budget), the last value held once the sweep ended.
func area(curve []float64, budget int, before float64) float64 {
	sum, last := 0.0, before
	for i := range budget {
		if i < len(curve) && !math.IsInf(curve[i], 1) {
			last = curve[i]
		}
		sum += last
	}
	return sum / float64(budget)
}

// reachAt is the trial-time (in reports) at which the curve first got to target, NaN if never.
func reachAt(curve []float64, target float64) float64 {
	for i, v := range curve {
		if v <= target {
			return float64(i + 1)
		}
	}
	return math.NaN()
}

func writeSweepTable(w io.Writer, obj objective, ms []method, sums []summary, o SweepOptions, took time.Duration) {
	fmt.Fprintf(w, "\n### %s\n\n", obj.name)
	fmt.Fprintf(w, "%d trials (max_total_trials), %d concurrent, %d reports per full trial, seeds 1–%d; computed in %s.\n\n",
		o.Trials, o.Workers, o.Reports, o.Seeds, took.Round(time.Millisecond))
	fmt.Fprintln(w, "| method | regret of the best trial (mean) | area under best-so-far regret (mean; ratio to random) | trial-time used, full trials (mean; ratio) | trial-time to reach random's final best, fraction of random's (median; seeds reaching it) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	base := sums[0]
	for k, m := range ms {
		s := sums[k]
		reached := 0
		for _, r := range s.reach {
			if !math.IsNaN(r) {
				reached++
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s (%.2f×) | %.1f (%.2f×) | %s (%d/%d) |\n", m.name,
			num4(mean(s.regret)), num4(mean(s.auc)), mean(s.auc)/mean(base.auc),
			mean(s.spent), mean(s.spent)/mean(base.spent), num4(medianNaN(s.reach)), reached, len(s.reach))
	}
}

func num4(v float64) string {
	if math.IsNaN(v) {
		return "not reached"
	}
	return fmt.Sprintf("%.4g", v)
}

func mean(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// medianNaN is the median with a never-reached (NaN) seed counted as the worst.
func medianNaN(vs []float64) float64 {
	s := slices.Clone(vs)
	for i, v := range s {
		if math.IsNaN(v) {
			s[i] = math.Inf(1)
		}
	}
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if math.IsInf(m, 1) {
		return math.NaN()
	}
	return m
}
