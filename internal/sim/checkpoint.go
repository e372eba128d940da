package sim

import (
	"fmt"
	"strings"
	"time"
)

// lose charges a preempted attempt's work: what it did past its last periodic checkpoint is
// lost, the rest is kept for the next attempt (all of it is lost without checkpoints).
func (w *world) lose(r *run) {
	lost, kept := LostToPreemption(w.now.Sub(r.started), w.cfg.CheckpointInterval)
	r.saved += kept
	w.st.lost += lost
}

// LostToPreemption splits the work an attempt did before its preemption (pure): the part saved
// by its last periodic checkpoint (every `every`; none when every is 0) and the part lost.
func LostToPreemption(did, every time.Duration) (lost, kept time.Duration) {
	if did <= 0 {
		return 0, 0
	}
	if every <= 0 {
		return did, 0
	}
	kept = did / every * every
	return did - kept, kept
}

// CheckpointComparison simulates cfg without checkpoints and with each interval, under the
// Hangar policy: what preemptions cost in each case.
func CheckpointComparison(cfg Config, intervals []time.Duration) []Result {
	out := make([]Result, 0, len(intervals)+1)
	for _, every := range append([]time.Duration{0}, intervals...) {
		c := cfg
		c.CheckpointInterval = every
		r := Simulate(c, Hangar())
		r.Policy = "no checkpoints"
		if every > 0 {
			r.Policy = fmt.Sprintf("checkpoint every %s", every)
		}
		out = append(out, r)
	}
	return out
}

// CheckpointMarkdown renders CheckpointComparison's results as a table.
func CheckpointMarkdown(rs []Result) string {
	var b strings.Builder
	b.WriteString("| runs | preemption requeues | work lost | lost per preemption | node-hours | jobs completed |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range rs {
		per := time.Duration(0)
		if r.PreemptionRequeues > 0 {
			per = r.WorkLost / time.Duration(r.PreemptionRequeues)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.1f | %d/%d |\n", r.Policy, r.PreemptionRequeues,
			r.WorkLost.Round(time.Minute), per.Round(time.Second), r.NodeTime.Hours(), r.Completed, r.Jobs)
	}
	return b.String()
}
