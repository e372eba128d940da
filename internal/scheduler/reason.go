package scheduler

import (
	"fmt"

	"github.com/hangar-ml/hangar/internal/resources"
)

// impossible says why a run can never start as configured, or "".
func impossible(ps *poolState, r *Run, n int, cost, quota int64, limited bool) string {
	req, size := r.PerNode, ps.Size
	switch {
	case n > ps.MaxNodes:
		return fmt.Sprintf("needs %s, cluster max_instances is %d", plural(n, "node"), ps.MaxNodes)
	case req.GPU > size.GPU:
		return fmt.Sprintf("needs %s per node, size has %d", plural(int(req.GPU), "GPU"), size.GPU)
	case req.MilliCPU > size.MilliCPU:
		return fmt.Sprintf("needs %s cores per node, size has %s",
			resources.FormatCPU(req.MilliCPU), resources.FormatCPU(size.MilliCPU))
	case req.Memory > size.Memory:
		return fmt.Sprintf("needs %s memory per node, size has %s",
			resources.FormatMemory(req.Memory), resources.FormatMemory(size.Memory))
	case limited && cost > quota:
		return fmt.Sprintf("needs %s cores of family %s, quota is %s",
			resources.FormatCPU(cost), r.Family, resources.FormatCPU(quota))
	}
	return ""
}

// headReason explains what the first run waiting for nodes in a pool waits for.
func headReason(ps *poolState, n, free, starting, missing int, canGrow bool) string {
	cluster := fmt.Sprintf("cluster %d/%d nodes", ps.total, ps.MaxNodes)
	switch {
	case missing <= 0:
		return fmt.Sprintf("waiting for %s to start", plural(n-free, "node"))
	case canGrow && starting > 0:
		return fmt.Sprintf("waiting for %s to start and %d more to be added (%s)",
			plural(starting, "node"), missing, cluster)
	case canGrow:
		return fmt.Sprintf("waiting for %s to be added (%s)", plural(missing, "node"), cluster)
	}
	return fmt.Sprintf("waiting for running work to free %s (%s)", plural(missing, "node"), cluster)
}

// isolatedReason says that a run of an isolated size waits for nodes that run nothing else.
func isolatedReason(ps *poolState, n int) string {
	what := "a node of its own"
	if n > 1 {
		what = fmt.Sprintf("%d nodes of their own", n)
	}
	size := "its size is isolated"
	if ps.SizeName != "" {
		size = "size " + ps.SizeName + " is isolated"
	}
	return fmt.Sprintf("waiting for %s (%s)", what, size)
}

// behindReason says that r waits behind an earlier run h. It does not name h: the run ahead
// changes each time one starts, and a reason that changed with it would have every waiting run
// rewritten on every start (work growing with the queue, not with what changed). The run ahead
// shows its own reason.
func behindReason(r, h *Run) string {
	if h.Priority > r.Priority {
		return "waiting behind higher-priority runs"
	}
	return "waiting behind runs queued earlier"
}

// quotaReason explains a run that would take its family over quota.
func (s *state) quotaReason(r *Run, cost, quota int64) string {
	f := r.Family
	msg := fmt.Sprintf("quota: family %s %s/%s cores", f,
		resources.FormatCPU(s.used[f]+s.held[f]), resources.FormatCPU(quota))
	if s.held[f] > 0 {
		msg += fmt.Sprintf(" (%s held for runs waiting for nodes)", resources.FormatCPU(s.held[f]))
	}
	return msg + ", run needs " + resources.FormatCPU(cost)
}

// userReason explains a run whose user has as many runs as allowed.
func userReason(user string, running, limit int) string {
	return fmt.Sprintf("user %s has %d/%d runs running", user, running, limit)
}

// plural renders "1 node", "2 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
