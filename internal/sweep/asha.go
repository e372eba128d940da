package sweep

import (
	"fmt"
	"slices"
)

// Hangar's asynchronous successive halving (Li et al., "A System for Massively Parallel
// Hyperparameter Tuning", 2020), as a stopping rule: rungs sit at min_resource·eta^k reports
// (eta: reduction_factor), below max_resource. A running trial is judged at the highest rung it
// has reached, by its value at that report, against every trial that reached the rung so far:
// it continues only while it ranks in the top max(1, floor(n/eta)) of those n (the first trial
// at a rung always continues). A trial reaching max_resource reports is left to complete.

// asha is the termination with its defaults: min_resource 1, reduction_factor 3.
func (t Termination) asha() Termination {
	if t.MinResource == 0 {
		t.MinResource = 1
	}
	if t.ReductionFactor == 0 {
		t.ReductionFactor = 3
	}
	return t
}

// maxRungs bounds the rung ladder when max_resource is not set.
const maxRungs = 40

// rungs are the report counts of the rungs, lowest first.
func rungs(t Termination) []int {
	var rs []int
	for r := t.MinResource; len(rs) < maxRungs && (t.MaxResource == 0 || r < t.MaxResource); r *= t.ReductionFactor {
		rs = append(rs, r)
	}
	return rs
}

func ashaStops(t Termination, g goal, trials []Trial) []Stop {
	rs := rungs(t)
	var out []Stop
	for _, tr := range trials {
		if !stoppable(tr) || (t.MaxResource > 0 && len(tr.Metrics) >= t.MaxResource) {
			continue
		}
		k := highestRung(rs, len(tr.Metrics))
		if k < 0 {
			continue
		}
		r := rs[k]
		ps := peersAt(g, trials, r)
		keep := max(1, len(ps)/t.ReductionFactor)
		rank := slices.IndexFunc(ps, func(p peer) bool { return p.index == tr.Index }) + 1
		if rank <= keep {
			continue
		}
		out = append(out, Stop{Index: tr.Index, Reason: fmt.Sprintf(
			"asha: %s at rung %d (%s) ranks %d of %d; only the top %d (1/%d) continue",
			fmtv(tr.Metrics[r-1].Value), k, at(tr, r), rank, len(ps), keep, t.ReductionFactor)})
	}
	return out
}

// highestRung is the index of the highest rung n reports reached, -1 for none.
func highestRung(rs []int, n int) int {
	k := -1
	for i, r := range rs {
		if n >= r {
			k = i
		}
	}
	return k
}
