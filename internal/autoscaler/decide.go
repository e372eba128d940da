package autoscaler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// Decide scales each cluster, as a pure function of its input (time arrives as Now; the
// order of the input's lists does not matter). Per cluster, in this order:
//  1. preempted nodes, unusable ones whose agent stopped or stayed silent for LostAfter, are
//     deleted, the runs of preempted ones requeued
//     (or failed past the retry limit); provisioning nodes past their join deadline
//     (JoinBy, else CreatedAt + ProvisionTimeout) are deleted as never joined, each a
//     provisioning failure (on low_priority clusters a preemption is one too);
//  2. above Max (Max was lowered), provisioning nodes are cancelled, newest first, then
//     empty unreserved nodes released, oldest idle first;
//  3. empty, unreserved idle nodes idle for at least IdleTimeBeforeScaleDown are released,
//     oldest idle first, while more than Min nodes remain; a node with a run never is;
//  4. nodes are created for the queue's Demand, or to reach Min, within Max (every node
//     listed counts, provisioning and releasing ones too), unless provisioning is in
//     backoff: after n failures, none until min(BackoffBase×2^(n-1), BackoffMax) after
//     the last. A node that joins after the last failure ends the backoff.
func Decide(in Input) Decision {
	pol := in.Policy.withDefaults()
	pools := slices.Clone(in.Pools)
	slices.SortFunc(pools, func(a, b Pool) int { return strings.Compare(a.ID, b.ID) })
	var d Decision
	for _, p := range pools {
		d.Pools = append(d.Pools, decidePool(in.Now, pol, p))
	}
	return d
}

// withDefaults fills zero fields.
func (p Policy) withDefaults() Policy {
	if p.ProvisionTimeout <= 0 {
		p.ProvisionTimeout = DefaultProvisionTimeout
	}
	if p.BackoffBase <= 0 {
		p.BackoffBase = DefaultBackoffBase
	}
	if p.BackoffMax <= 0 {
		p.BackoffMax = DefaultBackoffMax
	}
	if p.MaxPreemptionRetries <= 0 {
		p.MaxPreemptionRetries = DefaultMaxPreemptionRetries
	}
	if p.LostAfter <= 0 {
		p.LostAfter = DefaultLostAfter
	}
	return p
}

// pass is one cluster's decision in the making.
type pass struct {
	now   time.Time
	pol   Policy
	p     Pool
	min   int    // Min, never above Max
	nodes []Node // nodes still there, by ID
	out   PoolDecision
}

func decidePool(now time.Time, pol Policy, p Pool) PoolDecision {
	if p.IdleTimeBeforeScaleDown <= 0 {
		p.IdleTimeBeforeScaleDown = DefaultIdleTimeBeforeScaleDown
	}
	s := &pass{now: now, pol: pol, p: p, min: max(0, min(p.Min, p.Max)), out: PoolDecision{Pool: p.ID}}
	nodes := slices.Clone(p.Nodes)
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
	failures := s.removeLost(nodes)
	s.updateBackoff(failures)
	s.enforceMax()
	s.releaseIdle()
	s.scaleUp()
	s.out.Target = len(s.nodes) + s.out.Create
	return s.out
}

// removeLost deletes preempted, unusable and never-joined nodes, keeps the rest in s.nodes
// and returns how many provisioning failures it saw.
func (s *pass) removeLost(nodes []Node) int {
	failures := 0
	for _, n := range nodes {
		switch {
		case n.State == compute.NodePreempted:
			s.delete(n.ID, fmt.Sprintf("delete node %s: preempted", n.ID))
			s.requeue(n)
			if s.p.Tier == LowPriority {
				failures++
			}
		case n.State == compute.NodeUnusable && n.Gone:
			s.delete(n.ID, fmt.Sprintf("delete node %s: unusable (its agent stopped)", n.ID))
		case n.State == compute.NodeUnusable && !n.LastSeen.IsZero() && s.now.Sub(n.LastSeen) < s.pol.LostAfter:
			// Silent, maybe behind a cut link: no work goes there, and it counts toward the
			// cluster's size, until its agent is back or LostAfter has passed.
			s.nodes = append(s.nodes, n)
		case n.State == compute.NodeUnusable:
			s.delete(n.ID, fmt.Sprintf("delete node %s: unusable, not heard from for %s", n.ID, s.pol.LostAfter))
		case n.State == compute.NodeProvisioning && s.joinOverdue(n):
			s.out.Delete = append(s.out.Delete, NodeAction{Node: n.ID, NotJoined: true,
				Reason: fmt.Sprintf("delete node %s: did not join within %s", n.ID, s.joinWait(n))})
			s.explain(s.out.Delete[len(s.out.Delete)-1].Reason)
			failures++
		default:
			s.nodes = append(s.nodes, n)
		}
	}
	return failures
}

// joinOverdue reports whether a provisioning node's join deadline has passed.
func (s *pass) joinOverdue(n Node) bool {
	if !n.JoinBy.IsZero() {
		return !s.now.Before(n.JoinBy)
	}
	return !n.CreatedAt.IsZero() && s.now.Sub(n.CreatedAt) >= s.pol.ProvisionTimeout
}

// joinWait is how long a node was given to join, for its reason: from its creation to its
// deadline, in whole seconds when it has its own deadline.
func (s *pass) joinWait(n Node) time.Duration {
	if n.JoinBy.IsZero() || n.CreatedAt.IsZero() {
		return s.pol.ProvisionTimeout
	}
	return n.JoinBy.Sub(n.CreatedAt).Round(time.Second)
}

// requeue puts the runs of a preempted node back in the queue, or fails those that have
// been preempted too often.
func (s *pass) requeue(n Node) {
	runs := slices.Clone(n.Runs)
	slices.SortFunc(runs, func(a, b RunRef) int { return strings.Compare(a.ID, b.ID) })
	for _, r := range runs {
		a := RunAction{Run: r.ID, Node: n.ID, Preemptions: r.Preemptions + 1}
		if r.Preemptions >= s.pol.MaxPreemptionRetries {
			a.Reason = fmt.Sprintf("fail run %s: node %s preempted, %d preemptions exceed the retry limit %d",
				r.ID, n.ID, a.Preemptions, s.pol.MaxPreemptionRetries)
			s.out.Fail = append(s.out.Fail, a)
		} else {
			a.Reason = fmt.Sprintf("requeue run %s: node %s preempted (retry %d/%d)",
				r.ID, n.ID, a.Preemptions, s.pol.MaxPreemptionRetries)
			s.out.Requeue = append(s.out.Requeue, a)
		}
		s.explain(a.Reason)
	}
}

// updateBackoff records new failures, or clears the record once a node joined after the
// last failure.
func (s *pass) updateBackoff(failures int) {
	b := s.p.Backoff
	switch {
	case failures > 0:
		b.Failures += failures
		b.LastFailure = s.now
	case b.Failures > 0:
		for _, n := range s.nodes {
			if n.JoinedAt.After(b.LastFailure) {
				s.explain(fmt.Sprintf("provisioning recovered: node %s joined after %d failures", n.ID, b.Failures))
				b = Backoff{}
				break
			}
		}
	}
	s.out.Backoff = b
}

// nextTry is when creating nodes is allowed again under the backoff, or the zero time.
func (s *pass) nextTry() time.Time {
	b := s.out.Backoff
	if b.Failures <= 0 {
		return time.Time{}
	}
	delay := s.pol.BackoffBase
	for i := 1; i < b.Failures && delay < s.pol.BackoffMax; i++ {
		delay *= 2
	}
	return b.LastFailure.Add(min(delay, s.pol.BackoffMax))
}

func (s *pass) delete(id, reason string) {
	s.out.Delete = append(s.out.Delete, NodeAction{Node: id, Reason: reason})
	s.explain(reason)
}

func (s *pass) release(id, reason string) {
	s.out.Release = append(s.out.Release, NodeAction{Node: id, Reason: reason})
	s.explain(reason)
	s.nodes = slices.DeleteFunc(s.nodes, func(n Node) bool { return n.ID == id })
}

func (s *pass) explain(line string) { s.out.Explain = append(s.out.Explain, line) }
