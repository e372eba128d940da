package autoscaler

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// clock is an injected clock: tests move it, Decide only reads Input.Now.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) Advance(d time.Duration) { c.now = c.now.Add(d) }

func TestIdleBoundary(t *testing.T) {
	c := &clock{now: t0}
	p := Pool{ID: "c", Max: 2, IdleTimeBeforeScaleDown: 120 * time.Second,
		Nodes: []Node{{ID: "n1", State: compute.NodeIdle, JoinedAt: t0, IdleSince: c.Now()}}}
	decide := func() PoolDecision { return Decide(Input{Now: c.Now(), Pools: []Pool{p}}).Pools[0] }

	c.Advance(120*time.Second - time.Nanosecond)
	if d := decide(); len(d.Release) != 0 || d.Target != 1 {
		t.Fatalf("1ns before the idle time: released %v, target %d", d.Release, d.Target)
	}
	c.Advance(time.Nanosecond)
	d := decide()
	if len(d.Release) != 1 || d.Release[0].Reason != "release node n1: idle 120s ≥ 120s" || d.Target != 0 {
		t.Fatalf("exactly at the idle time: released %v, target %d", d.Release, d.Target)
	}
}

func TestProvisionTimeoutBoundary(t *testing.T) {
	c := &clock{now: t0}
	p := Pool{ID: "c", Max: 2, Nodes: []Node{{ID: "n1", State: compute.NodeProvisioning, CreatedAt: c.Now()}}}
	pol := Policy{ProvisionTimeout: 10 * time.Minute}
	decide := func() PoolDecision { return Decide(Input{Now: c.Now(), Policy: pol, Pools: []Pool{p}}).Pools[0] }

	c.Advance(10*time.Minute - time.Nanosecond)
	if d := decide(); len(d.Delete) != 0 {
		t.Fatalf("1ns before the timeout: deleted %v", d.Delete)
	}
	c.Advance(time.Nanosecond)
	if d := decide(); len(d.Delete) != 1 || d.Backoff.Failures != 1 {
		t.Fatalf("at the timeout: deleted %v, backoff %+v", d.Delete, d.Backoff)
	}
}

func TestBackoffBoundary(t *testing.T) {
	c := &clock{now: t0}
	// Two failures: wait 2 × 30s = 60s after the last one.
	p := Pool{ID: "c", Max: 2, Demand: 1, Backoff: Backoff{Failures: 2, LastFailure: c.Now()}}
	decide := func() PoolDecision { return Decide(Input{Now: c.Now(), Pools: []Pool{p}}).Pools[0] }

	c.Advance(time.Minute - time.Nanosecond)
	if d := decide(); d.Create != 0 {
		t.Fatalf("1ns before the backoff ends: created %d", d.Create)
	}
	c.Advance(time.Nanosecond)
	if d := decide(); d.Create != 1 {
		t.Fatalf("when the backoff ends: created %d (%v)", d.Create, d.Explain)
	}
	p.Backoff.Failures = 60 // far beyond the cap: BackoffMax applies
	c.Advance(DefaultBackoffMax - time.Minute)
	if d := decide(); d.Create != 1 {
		t.Fatalf("after BackoffMax: created %d (%v)", d.Create, d.Explain)
	}
}

// A node's own join deadline (JoinBy) is exact, and the deletion says how long it was given.
func TestJoinDeadlineBoundary(t *testing.T) {
	c := &clock{now: t0}
	created := c.Now()
	c.Advance(20 * time.Second) // the create hook took 20s; then join_timeout 90s
	p := Pool{ID: "c", Max: 2, Nodes: []Node{{ID: "n1", State: compute.NodeProvisioning, CreatedAt: created, JoinBy: c.Now().Add(90 * time.Second)}}}
	decide := func() PoolDecision { return Decide(Input{Now: c.Now(), Pools: []Pool{p}}).Pools[0] }

	c.Advance(90*time.Second - time.Nanosecond)
	if d := decide(); len(d.Delete) != 0 {
		t.Fatalf("1ns before the join deadline: deleted %v", d.Delete)
	}
	c.Advance(time.Nanosecond)
	d := decide()
	want := NodeAction{Node: "n1", Reason: "delete node n1: did not join within 1m50s", NotJoined: true}
	if len(d.Delete) != 1 || d.Delete[0] != want || d.Backoff.Failures != 1 {
		t.Fatalf("at the join deadline: deleted %+v, backoff %+v", d.Delete, d.Backoff)
	}
}
