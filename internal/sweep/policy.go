package sweep

import (
	"fmt"
	"slices"
)

// Early termination, with Azure's semantics for bandit, median_stopping and
// truncation_selection: one "interval" is one report of the primary metric, and a policy
// judges a running trial at its latest evaluation point, the largest multiple of
// evaluation_interval (default 1) that is at least delay_evaluation (and at least 1) and that
// the trial has reached. Every trial that reached that report, running or ended, is a peer.
// Being stateless, a policy judges a trial again at every decision until its next evaluation
// point, against the peers known by then.

// judge is a policy's verdict on one running trial: stop, and why; "" to let it run.
type judge func(t Trial, e int) string

// policyStops are the running trials the termination policy stops now, by index.
func policyStops(cfg Config, trials []Trial) []Stop {
	t := cfg.Termination
	if t == nil {
		return nil
	}
	g := goalOf(cfg.Objective)
	var j judge
	switch t.Type {
	case "bandit":
		j = func(tr Trial, e int) string { return bandit(*t, g, trials, tr, e) }
	case "median_stopping":
		j = func(tr Trial, e int) string { return medianStopping(g, trials, tr, e) }
	case "truncation_selection":
		j = func(tr Trial, e int) string { return truncation(t.TruncationPercentage, g, trials, tr, e) }
	case "asha":
		return ashaStops(t.asha(), g, trials)
	default:
		return nil
	}
	var out []Stop
	for _, tr := range trials {
		if !stoppable(tr) {
			continue
		}
		e, ok := evaluationPoint(len(tr.Metrics), t.EvaluationInterval, t.DelayEvaluation)
		if !ok {
			continue
		}
		if why := j(tr, e); why != "" {
			out = append(out, Stop{Index: tr.Index, Reason: why})
		}
	}
	return out
}

// stoppable: running and not already being stopped.
func stoppable(t Trial) bool { return t.State == Running && t.Stopped == "" }

// evaluationPoint is the latest report count at which the policy applies, given n reports.
func evaluationPoint(n, interval, delay int) (int, bool) {
	interval = max(interval, 1)
	e := n / interval * interval
	return e, e >= 1 && e >= delay
}

// peer is a trial's value at one report count.
type peer struct {
	index int
	v     float64
}

// peersAt are the values at report e of the trials that reached it, best first (ties: lower
// index first).
func peersAt(g goal, trials []Trial, e int) []peer {
	var ps []peer
	for _, t := range trials {
		if len(t.Metrics) >= e {
			ps = append(ps, peer{t.Index, t.Metrics[e-1].Value})
		}
	}
	slices.SortStableFunc(ps, func(a, b peer) int {
		switch {
		case g.better(a.v, b.v):
			return -1
		case g.better(b.v, a.v):
			return 1
		}
		return a.index - b.index
	})
	return ps
}

// at names report e for the user, with the step the trial logged it at.
func at(t Trial, e int) string {
	return fmt.Sprintf("report %d (step %d)", e, t.Metrics[e-1].Step)
}

// bandit stops a trial whose value at report e is not within the slack of the best value any
// trial had at report e: maximize, below best/(1+slack_factor) or best-slack_amount;
// minimize, above best·(1+slack_factor) or best+slack_amount.
func bandit(p Termination, g goal, trials []Trial, t Trial, e int) string {
	best := peersAt(g, trials, e)[0]
	v := t.Metrics[e-1].Value
	var bound float64
	slack := fmt.Sprintf("slack_amount %s", fmtv(p.SlackAmount))
	switch {
	case p.SlackFactor > 0 && !bool(g):
		bound = best.v / (1 + p.SlackFactor)
	case p.SlackFactor > 0:
		bound = best.v * (1 + p.SlackFactor)
	case !bool(g):
		bound = best.v - p.SlackAmount
	default:
		bound = best.v + p.SlackAmount
	}
	if p.SlackFactor > 0 {
		slack = fmt.Sprintf("slack_factor %s", fmtv(p.SlackFactor))
	}
	if !g.better(bound, v) {
		return ""
	}
	return fmt.Sprintf("bandit: %s at %s is outside %s of the best %s (trial %d): the bound is %s",
		fmtv(v), at(t, e), slack, fmtv(best.v), best.index, fmtv(bound))
}

// medianStopping stops a trial whose best value over its first e reports is worse than the
// median of the other trials' running averages over their first e reports (Google Vizier's
// rule, which Azure follows); it needs at least one other trial at report e.
func medianStopping(g goal, trials []Trial, t Trial, e int) string {
	var avgs []float64
	for _, o := range trials {
		if o.Index == t.Index || len(o.Metrics) < e {
			continue
		}
		sum := 0.0
		for _, p := range o.Metrics[:e] {
			sum += p.Value
		}
		avgs = append(avgs, sum/float64(e))
	}
	if len(avgs) == 0 {
		return ""
	}
	med := median(avgs)
	own := g.best(values(t.Metrics[:e]))
	if !g.better(med, own) {
		return ""
	}
	return fmt.Sprintf("median_stopping: the best %s by %s is worse than the median %s of %d other trials' running averages",
		fmtv(own), at(t, e), fmtv(med), len(avgs))
}

// truncation stops a trial among the worst pct% (rounded down) of the trials at report e, by
// their value at report e.
func truncation(pct int, g goal, trials []Trial, t Trial, e int) string {
	ps := peersAt(g, trials, e)
	cut := len(ps) * pct / 100
	rank := slices.IndexFunc(ps, func(p peer) bool { return p.index == t.Index }) + 1
	if cut == 0 || rank <= len(ps)-cut {
		return ""
	}
	return fmt.Sprintf("truncation_selection: %s at %s ranks %d of %d, in the lowest %d%% (%d trials)",
		fmtv(t.Metrics[e-1].Value), at(t, e), rank, len(ps), pct, cut)
}

func values(ps []Point) []float64 {
	vs := make([]float64, len(ps))
	for i, p := range ps {
		vs[i] = p.Value
	}
	return vs
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
