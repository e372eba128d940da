package cluster

import (
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// ReasonAgentStopped is the reason of a node whose agent said it stopped (not merely silent).
const ReasonAgentStopped = "the agent stopped"

// ReasonNotice is the reason of a node whose agent got the machine's shutdown notice.
const ReasonNotice = "the machine got its shutdown notice (preemption)"

// occupancy is the state an agent's report puts a node in: running while a supervisor is alive
// or an assignment waits, idle otherwise. Releasing and preempted nodes stay so; an agent that
// leaves makes its node unusable.
func occupancy(from compute.NodeState, runs []api.AgentRun, pendingAssign int, leaving bool) (compute.NodeState, string) {
	switch {
	case from == compute.NodeReleasing || from == compute.NodePreempted:
		return from, ""
	case leaving:
		return compute.NodeUnusable, ReasonAgentStopped
	}
	alive := 0
	for _, r := range runs {
		if r.Alive {
			alive++
		}
	}
	to, why := compute.NodeIdle, "no runs"
	if alive+pendingAssign > 0 {
		to, why = compute.NodeRunning, plural(alive+pendingAssign, "run")
	}
	switch from {
	case compute.NodeProvisioning:
		why = "the agent joined; " + why
	case compute.NodeUnusable:
		why = "the agent is back; " + why
	}
	return to, why
}

// transition moves n to a state: it keeps IdleSince and returns the timeline entry. Moving
// between idle and running is not a timeline entry (it is occupancy, not the node's life).
func transition(n *store.Node, to compute.NodeState, reason string, now time.Time) []store.NodeEvent {
	from := n.State
	if to == from {
		return nil
	}
	n.State, n.StateReason = to, reason
	switch {
	case to == compute.NodeIdle:
		n.IdleSince = now
	case from == compute.NodeIdle:
		n.IdleSince = time.Time{}
	}
	if occupied(from) && occupied(to) {
		return nil
	}
	return []store.NodeEvent{{Time: now, From: from, To: to, Reason: reason}}
}

func occupied(s compute.NodeState) bool { return s == compute.NodeIdle || s == compute.NodeRunning }

// plural is "1 run", "2 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
