package autoscaler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// enforceMax brings a cluster above Max back down where it can: provisioning nodes are
// cancelled (newest first), then empty unreserved idle nodes released (oldest idle first).
func (s *pass) enforceMax() {
	if len(s.nodes) <= s.p.Max {
		return
	}
	over := fmt.Sprintf("%d nodes > max_instances %d", len(s.nodes), s.p.Max)
	var starting []Node
	for _, n := range s.nodes {
		if n.State == compute.NodeProvisioning {
			starting = append(starting, n)
		}
	}
	slices.SortFunc(starting, func(a, b Node) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	for _, n := range starting {
		if len(s.nodes) <= s.p.Max {
			return
		}
		s.delete(n.ID, fmt.Sprintf("cancel node %s: %s", n.ID, over))
		s.nodes = slices.DeleteFunc(s.nodes, func(m Node) bool { return m.ID == n.ID })
	}
	for _, c := range s.idleNodes() {
		if len(s.nodes) <= s.p.Max {
			return
		}
		if !c.node.Reserved {
			s.release(c.node.ID, fmt.Sprintf("release node %s: %s", c.node.ID, over))
		}
	}
}

// idleNode is an empty idle node and since when it has been so.
type idleNode struct {
	node  Node
	since time.Time
}

// idleNodes lists the empty idle nodes whose idle start is known, oldest idle first.
func (s *pass) idleNodes() []idleNode {
	var out []idleNode
	for _, n := range s.nodes {
		if n.State != compute.NodeIdle || len(n.Runs) > 0 {
			continue
		}
		since := n.IdleSince
		if since.IsZero() {
			since = n.JoinedAt
		}
		if !since.IsZero() {
			out = append(out, idleNode{node: n, since: since})
		}
	}
	slices.SortFunc(out, func(a, b idleNode) int {
		return cmp.Or(a.since.Compare(b.since), strings.Compare(a.node.ID, b.node.ID))
	})
	return out
}

// releaseIdle releases nodes idle for at least the idle time, oldest first, down to Min.
func (s *pass) releaseIdle() {
	limit := s.p.IdleTimeBeforeScaleDown
	for _, c := range s.idleNodes() {
		idle := s.now.Sub(c.since)
		if idle < limit {
			continue
		}
		id := c.node.ID
		switch {
		case c.node.Reserved:
			s.explain(fmt.Sprintf("keep node %s: reserved for a waiting run", id))
		case len(s.nodes) <= s.min:
			s.explain(fmt.Sprintf("keep node %s: min_instances %d", id, s.p.Min))
		default:
			s.release(id, fmt.Sprintf("release node %s: idle %s ≥ %s", id, secs(idle.Truncate(100*time.Millisecond)), secs(limit)))
		}
	}
}

// scaleUp creates the nodes the queue needs, or those missing to Min, within Max and
// outside backoff.
func (s *pass) scaleUp() {
	have := len(s.nodes)
	verb := "need"
	if s.p.DemandRuns == 1 {
		verb = "needs"
	}
	want, why := s.p.Demand, fmt.Sprintf("%s %s %s", plural(s.p.DemandRuns, "queued run"), verb, plural(s.p.Demand, "node"))
	if s.p.DemandRuns <= 0 {
		why = fmt.Sprintf("the queue needs %s", plural(s.p.Demand, "node"))
	}
	if need := s.min - have; need > want {
		want, why = need, fmt.Sprintf("min_instances %d", s.p.Min)
	}
	if want <= 0 {
		return
	}
	room := s.p.Max - have
	if room <= 0 {
		s.explain(fmt.Sprintf("stay at %d: max_instances %d reached, %s", have, s.p.Max, why))
		return
	}
	if next := s.nextTry(); !next.IsZero() && s.now.Before(next) {
		s.explain(fmt.Sprintf("provisioning backoff: %s, next try at %s",
			plural(s.out.Backoff.Failures, "failure"), next.UTC().Format(time.RFC3339)))
		return
	}
	s.out.Create = min(want, room)
	line := fmt.Sprintf("scale up %d→%d: %s", have, have+s.out.Create, why)
	if want > room {
		line += fmt.Sprintf(" (capped by max_instances %d)", s.p.Max)
	}
	s.explain(line)
}

// secs renders a duration in seconds: "121s", "119.999999999s".
func secs(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Seconds())
}

// plural renders "1 node", "3 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
