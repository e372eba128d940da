package autoscaler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/hangar-ml/hangar/internal/compute"
)

var propStates = []compute.NodeState{compute.NodeProvisioning, compute.NodeIdle, compute.NodeRunning, compute.NodeReleasing, compute.NodePreempted, compute.NodeUnusable}

func genInput(t *rapid.T) Input {
	in := Input{Now: t0}
	in.Policy.ProvisionTimeout = time.Duration(rapid.IntRange(0, 1800).Draw(t, "provisionTimeout")) * time.Second
	for p := range rapid.IntRange(1, 3).Draw(t, "pools") {
		pool := Pool{ID: fmt.Sprintf("c%d", p), Min: rapid.IntRange(0, 4).Draw(t, "min"), Max: rapid.IntRange(0, 8).Draw(t, "max"),
			IdleTimeBeforeScaleDown: time.Duration(rapid.IntRange(0, 300).Draw(t, "idle")) * time.Second,
			Tier:                    rapid.SampledFrom([]Tier{Dedicated, LowPriority}).Draw(t, "tier"),
			Demand:                  rapid.IntRange(0, 10).Draw(t, "demand"), DemandRuns: rapid.IntRange(0, 10).Draw(t, "druns")}
		if rapid.Bool().Draw(t, "failed") {
			pool.Backoff = Backoff{Failures: rapid.IntRange(1, 6).Draw(t, "failures"), LastFailure: ago(rapid.IntRange(0, 1000).Draw(t, "lastFail"))}
		}
		for i := range rapid.IntRange(0, 10).Draw(t, "nodes") {
			n := Node{ID: fmt.Sprintf("%s-n%d", pool.ID, i), State: rapid.SampledFrom(propStates).Draw(t, "state"),
				CreatedAt: ago(rapid.IntRange(0, 2000).Draw(t, "created")), Reserved: rapid.Bool().Draw(t, "reserved")}
			if rapid.Bool().Draw(t, "hasJoinBy") {
				n.JoinBy = t0.Add(time.Duration(rapid.IntRange(-600, 600).Draw(t, "joinBy")) * time.Second)
			}
			if rapid.Bool().Draw(t, "joined") {
				n.JoinedAt = ago(rapid.IntRange(0, 1500).Draw(t, "joinedAt"))
			}
			if n.State == compute.NodeUnusable {
				n.Gone = rapid.Bool().Draw(t, "gone")
				if rapid.Bool().Draw(t, "seen") {
					n.LastSeen = ago(rapid.IntRange(0, 2000).Draw(t, "lastSeen"))
				}
			}
			if rapid.Bool().Draw(t, "hasIdle") {
				n.IdleSince = ago(rapid.IntRange(0, 600).Draw(t, "idleSince"))
			}
			for r := range rapid.IntRange(0, 2).Draw(t, "runs") {
				n.Runs = append(n.Runs, RunRef{ID: fmt.Sprintf("%s-r%d", n.ID, r), Preemptions: rapid.IntRange(0, 4).Draw(t, "pre")})
			}
			pool.Nodes = append(pool.Nodes, n)
		}
		in.Pools = append(in.Pools, pool)
	}
	return in
}

func TestDecidePropertiesHold(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		d := Decide(in)
		if len(d.Pools) != len(in.Pools) {
			t.Fatalf("%d decisions for %d pools", len(d.Pools), len(in.Pools))
		}
		for i, pd := range d.Pools {
			checkPool(t, in, in.Pools[i], pd)
		}
	})
}

// checkPool asserts the hard rules for one cluster (pools are generated in ID order).
func checkPool(t *rapid.T, in Input, p Pool, d PoolDecision) {
	byID := map[string]Node{}
	for _, n := range p.Nodes {
		byID[n.ID] = n
	}
	gone := map[string]bool{}
	for _, a := range slices.Concat(d.Delete, d.Release) {
		if _, ok := byID[a.Node]; !ok || gone[a.Node] {
			t.Fatalf("unknown or repeated node %q", a.Node)
		}
		gone[a.Node] = true
	}
	for _, a := range d.Release {
		if n := byID[a.Node]; len(n.Runs) > 0 || n.Reserved || n.State != compute.NodeIdle {
			t.Fatalf("released busy, reserved or non-idle node %+v", n)
		}
	}
	kept := len(p.Nodes) - len(gone)
	if d.Target != kept+d.Create || d.Create < 0 {
		t.Fatalf("target %d != %d kept + %d created", d.Target, kept, d.Create)
	}
	lost := 0
	for _, n := range p.Nodes {
		if (n.State == compute.NodePreempted || n.State == compute.NodeUnusable) && gone[n.ID] {
			lost++
		}
		silent := n.State == compute.NodeUnusable && !n.Gone && !n.LastSeen.IsZero() && in.Now.Sub(n.LastSeen) < DefaultLostAfter
		if silent == gone[n.ID] && n.State == compute.NodeUnusable {
			t.Fatalf("unusable node %+v: deleted %v (a silent one stays for LostAfter, a gone one goes)", n, gone[n.ID])
		}
	}
	if before := len(p.Nodes) - lost; before <= p.Max && d.Target > p.Max {
		t.Fatalf("target %d exceeds max %d", d.Target, p.Max)
	}
	if d.Create > 0 && d.Target > p.Max {
		t.Fatalf("created %d beyond max %d (target %d)", d.Create, p.Max, d.Target)
	}
	floor := max(0, min(p.Min, p.Max))
	if len(d.Release) > 0 && d.Target < floor {
		t.Fatalf("released down to %d, below min %d", d.Target, floor)
	}
	if d.Target < floor && !slices.ContainsFunc(d.Explain, func(s string) bool { return strings.HasPrefix(s, "provisioning backoff") }) {
		t.Fatalf("target %d below min %d without backoff: %v", d.Target, floor, d.Explain)
	}
	checkRequeues(t, p, d)
	checkJoinDeadlines(t, in, p, d)
}

// checkJoinDeadlines asserts that exactly the provisioning nodes past their join deadline
// (their own JoinBy, else CreatedAt + ProvisionTimeout) are deleted as not joined, and that
// each counts as a provisioning failure.
func checkJoinDeadlines(t *rapid.T, in Input, p Pool, d PoolDecision) {
	timeout := in.Policy.ProvisionTimeout
	if timeout <= 0 {
		timeout = DefaultProvisionTimeout
	}
	notJoined := map[string]bool{}
	for _, a := range d.Delete {
		if a.NotJoined {
			notJoined[a.Node] = true
		}
	}
	for _, n := range p.Nodes {
		deadline := n.JoinBy
		if deadline.IsZero() && !n.CreatedAt.IsZero() {
			deadline = n.CreatedAt.Add(timeout)
		}
		overdue := n.State == compute.NodeProvisioning && !deadline.IsZero() && !in.Now.Before(deadline)
		if overdue != notJoined[n.ID] {
			t.Fatalf("node %+v (deadline %s): overdue %v, deleted as not joined %v", n, deadline, overdue, notJoined[n.ID])
		}
	}
	if len(notJoined) > 0 && d.Backoff.Failures < p.Backoff.Failures+len(notJoined) {
		t.Fatalf("%d nodes did not join, but failures went %d → %d", len(notJoined), p.Backoff.Failures, d.Backoff.Failures)
	}
}

// checkRequeues asserts that exactly the runs of preempted nodes are requeued or failed.
func checkRequeues(t *rapid.T, p Pool, d PoolDecision) {
	want := map[string]bool{}
	for _, n := range p.Nodes {
		if n.State == compute.NodePreempted {
			for _, r := range n.Runs {
				want[r.ID] = true
			}
		}
	}
	for _, a := range slices.Concat(d.Requeue, d.Fail) {
		if !want[a.Run] {
			t.Fatalf("run %s requeued or failed twice or without preemption", a.Run)
		}
		delete(want, a.Run)
	}
	if len(want) > 0 {
		t.Fatalf("runs of preempted nodes left alone: %v", want)
	}
}

func TestDecideDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		want := Decide(in)
		if diff := cmp.Diff(want, Decide(in)); diff != "" {
			t.Fatalf("second run differs:\n%s", diff)
		}
		shuffled := in
		shuffled.Pools = rapid.Permutation(in.Pools).Draw(t, "pools order")
		for i := range shuffled.Pools {
			p := &shuffled.Pools[i]
			p.Nodes = rapid.Permutation(p.Nodes).Draw(t, "nodes order")
			for j := range p.Nodes {
				p.Nodes[j].Runs = rapid.Permutation(p.Nodes[j].Runs).Draw(t, "runs order")
			}
		}
		if diff := cmp.Diff(want, Decide(shuffled)); diff != "" {
			t.Fatalf("shuffled input gives another decision:\n%s", diff)
		}
	})
}
