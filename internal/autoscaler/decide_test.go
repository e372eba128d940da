package autoscaler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hangar-ml/hangar/internal/compute"
)

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// ago is t0 minus s seconds.
func ago(s int) time.Time { return t0.Add(-time.Duration(s) * time.Second) }

func idleFor(id string, secs int) Node {
	return Node{ID: id, State: compute.NodeIdle, CreatedAt: ago(3600), JoinedAt: ago(3500), IdleSince: ago(secs)}
}

func busyNode(id string) Node {
	return Node{ID: id, State: compute.NodeRunning, CreatedAt: ago(3600), JoinedAt: ago(3500), Runs: []RunRef{{ID: "r-" + id}}}
}

func decideOne(t *testing.T, p Pool) PoolDecision {
	t.Helper()
	d := Decide(Input{Now: t0, Pools: []Pool{p}})
	if len(d.Pools) != 1 {
		t.Fatalf("got %d pool decisions", len(d.Pools))
	}
	return d.Pools[0]
}

// ruleCases are single clusters, one rule each, with the whole decision expected.
var ruleCases = []struct {
	name string
	pool Pool
	want PoolDecision
}{{
	name: "scale up for the queue",
	pool: Pool{ID: "c", Max: 5, Demand: 3, DemandRuns: 3},
	want: PoolDecision{Target: 3, Create: 3, Explain: []string{"scale up 0→3: 3 queued runs need 3 nodes"}},
}, {
	name: "scale up capped by max, provisioning nodes count",
	pool: Pool{ID: "c", Max: 4, Demand: 6, DemandRuns: 2, Nodes: []Node{
		{ID: "p1", State: compute.NodeProvisioning, CreatedAt: ago(60)}, busyNode("b1")}},
	want: PoolDecision{Target: 4, Create: 2,
		Explain: []string{"scale up 2→4: 2 queued runs need 6 nodes (capped by max_instances 4)"}},
}, {
	name: "at max nothing is created",
	pool: Pool{ID: "c", Max: 1, Demand: 1, DemandRuns: 1, Nodes: []Node{busyNode("b1")}},
	want: PoolDecision{Target: 1, Explain: []string{"stay at 1: max_instances 1 reached, 1 queued run needs 1 node"}},
}, {
	name: "scale up to min",
	pool: Pool{ID: "c", Min: 2, Max: 5},
	want: PoolDecision{Target: 2, Create: 2, Explain: []string{"scale up 0→2: min_instances 2"}},
}, {
	name: "release idle nodes oldest first, down to min, never a busy one",
	pool: Pool{ID: "c", Min: 2, Max: 9, IdleTimeBeforeScaleDown: 120 * time.Second, Nodes: []Node{
		idleFor("n3", 121), idleFor("n1", 300), idleFor("n2", 200), idleFor("n4", 119), busyNode("b1"),
		{ID: "b2", State: compute.NodeIdle, IdleSince: ago(999), Runs: []RunRef{{ID: "late"}}}}},
	want: PoolDecision{Target: 3, Release: []NodeAction{
		{Node: "n1", Reason: "release node n1: idle 300s ≥ 120s"},
		{Node: "n2", Reason: "release node n2: idle 200s ≥ 120s"},
		{Node: "n3", Reason: "release node n3: idle 121s ≥ 120s"},
	}},
}, {
	name: "min keeps idle nodes",
	pool: Pool{ID: "c", Min: 1, Max: 3, Nodes: []Node{idleFor("n1", 500), idleFor("n2", 400)}},
	want: PoolDecision{Target: 1, Release: []NodeAction{{Node: "n1", Reason: "release node n1: idle 500s ≥ 120s"}},
		Explain: []string{"release node n1: idle 500s ≥ 120s", "keep node n2: min_instances 1"}},
}, {
	name: "reserved idle nodes stay",
	pool: Pool{ID: "c", Max: 3, Nodes: []Node{{ID: "n1", State: compute.NodeIdle, IdleSince: ago(900), Reserved: true}}},
	want: PoolDecision{Target: 1, Explain: []string{"keep node n1: reserved for a waiting run"}},
}, {
	name: "a node that never joined is deleted and backs provisioning off",
	pool: Pool{ID: "c", Max: 3, Demand: 1, DemandRuns: 1, Nodes: []Node{{ID: "p1", State: compute.NodeProvisioning, CreatedAt: ago(900)}}},
	want: PoolDecision{Target: 0, Delete: []NodeAction{{Node: "p1", Reason: "delete node p1: did not join within 15m0s", NotJoined: true}},
		Backoff: Backoff{Failures: 1, LastFailure: t0},
		Explain: []string{"delete node p1: did not join within 15m0s",
			"provisioning backoff: 1 failure, next try at 2025-03-01T09:00:30Z"}},
}, {
	name: "a node past its own join deadline is deleted long before the provision timeout",
	pool: Pool{ID: "c", Max: 3, Demand: 1, DemandRuns: 1, Nodes: []Node{
		{ID: "p1", State: compute.NodeProvisioning, CreatedAt: ago(125), JoinBy: ago(1)},
		{ID: "p2", State: compute.NodeProvisioning, CreatedAt: ago(125), JoinBy: t0.Add(time.Second)}}},
	want: PoolDecision{Target: 1, Delete: []NodeAction{{Node: "p1", Reason: "delete node p1: did not join within 2m4s", NotJoined: true}},
		Backoff: Backoff{Failures: 1, LastFailure: t0},
		Explain: []string{"delete node p1: did not join within 2m4s",
			"provisioning backoff: 1 failure, next try at 2025-03-01T09:00:30Z"}},
}, {
	name: "a node's own join deadline outlasts the workspace's provision timeout",
	pool: Pool{ID: "c", Max: 3, Nodes: []Node{{ID: "p1", State: compute.NodeProvisioning, CreatedAt: ago(3000), JoinBy: t0.Add(time.Minute)}}},
	want: PoolDecision{Target: 1},
}, {
	name: "backoff doubles per failure",
	pool: Pool{ID: "c", Max: 3, Demand: 1, DemandRuns: 1, Backoff: Backoff{Failures: 3, LastFailure: ago(90)}},
	want: PoolDecision{Backoff: Backoff{Failures: 3, LastFailure: ago(90)},
		Explain: []string{"provisioning backoff: 3 failures, next try at 2025-03-01T09:00:30Z"}},
}, {
	name: "backoff over: try again",
	pool: Pool{ID: "c", Max: 3, Demand: 1, DemandRuns: 1, Backoff: Backoff{Failures: 3, LastFailure: ago(120)}},
	want: PoolDecision{Target: 1, Create: 1, Backoff: Backoff{Failures: 3, LastFailure: ago(120)},
		Explain: []string{"scale up 0→1: 1 queued run needs 1 node"}},
}, {
	name: "a node joining after the last failure ends the backoff",
	pool: Pool{ID: "c", Max: 3, Demand: 1, DemandRuns: 1, Backoff: Backoff{Failures: 5, LastFailure: ago(60)},
		Nodes: []Node{{ID: "n1", State: compute.NodeRunning, JoinedAt: ago(30), Runs: []RunRef{{ID: "r"}}}}},
	want: PoolDecision{Target: 2, Create: 1, Explain: []string{
		"provisioning recovered: node n1 joined after 5 failures", "scale up 1→2: 1 queued run needs 1 node"}},
}, {
	name: "preempted nodes: runs requeued up to the retry limit",
	pool: Pool{ID: "c", Max: 3, Tier: LowPriority, Nodes: []Node{{ID: "n1", State: compute.NodePreempted,
		Runs: []RunRef{{ID: "rb", Preemptions: 3}, {ID: "ra", Preemptions: 1}}}, {ID: "n2", State: compute.NodeUnusable}}},
	want: PoolDecision{
		Delete:  []NodeAction{{Node: "n1", Reason: "delete node n1: preempted"}, {Node: "n2", Reason: "delete node n2: unusable, not heard from for 15m0s"}},
		Requeue: []RunAction{{Run: "ra", Node: "n1", Preemptions: 2, Reason: "requeue run ra: node n1 preempted (retry 2/3)"}},
		Fail: []RunAction{{Run: "rb", Node: "n1", Preemptions: 4,
			Reason: "fail run rb: node n1 preempted, 4 preemptions exceed the retry limit 3"}},
		Backoff: Backoff{Failures: 1, LastFailure: t0},
		Explain: []string{"delete node n1: preempted", "requeue run ra: node n1 preempted (retry 2/3)",
			"fail run rb: node n1 preempted, 4 preemptions exceed the retry limit 3", "delete node n2: unusable, not heard from for 15m0s"}},
}, {
	name: "max lowered: cancel newest provisioning, then release idle",
	pool: Pool{ID: "c", Max: 1, Nodes: []Node{busyNode("b1"), idleFor("i1", 5),
		{ID: "p1", State: compute.NodeProvisioning, CreatedAt: ago(100)}, {ID: "p2", State: compute.NodeProvisioning, CreatedAt: ago(50)}}},
	want: PoolDecision{Target: 1,
		Delete: []NodeAction{{Node: "p2", Reason: "cancel node p2: 4 nodes > max_instances 1"},
			{Node: "p1", Reason: "cancel node p1: 4 nodes > max_instances 1"}},
		Release: []NodeAction{{Node: "i1", Reason: "release node i1: 4 nodes > max_instances 1"}}},
}}

func TestDecideRules(t *testing.T) {
	for _, tt := range ruleCases {
		t.Run(tt.name, func(t *testing.T) {
			got := decideOne(t, tt.pool)
			tt.want.Pool = tt.pool.ID
			if tt.want.Explain == nil {
				tt.want.Explain = reasons(tt.want)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// reasons is the Explain a decision has when it says nothing beyond its actions.
func reasons(d PoolDecision) []string {
	var out []string
	for _, a := range slices.Concat(d.Delete, d.Release) {
		out = append(out, a.Reason)
	}
	return out
}

// A node gone silent (a cut link) is kept, with its runs, until LostAfter; one whose agent said it
// stopped is deleted at once.
func TestSilentNodeIsKeptUntilLostAfter(t *testing.T) {
	tests := []struct {
		name     string
		node     Node
		deleted  bool
		reasonIs string
	}{
		{"silent for a minute", Node{ID: "n1", State: compute.NodeUnusable, LastSeen: t0.Add(-time.Minute), Runs: []RunRef{{ID: "r"}}}, false, ""},
		{"silent past LostAfter", Node{ID: "n1", State: compute.NodeUnusable, LastSeen: t0.Add(-DefaultLostAfter)}, true, "not heard from for 15m0s"},
		{"agent stopped", Node{ID: "n1", State: compute.NodeUnusable, LastSeen: t0, Gone: true}, true, "its agent stopped"},
		{"never heard from", Node{ID: "n1", State: compute.NodeUnusable}, true, "not heard from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(Input{Now: t0, Pools: []Pool{{ID: "c", Max: 2, Nodes: []Node{tt.node}}}}).Pools[0]
			if got := len(d.Delete) == 1; got != tt.deleted {
				t.Fatalf("deleted = %v, want %v: %+v", got, tt.deleted, d)
			}
			if tt.deleted && !strings.Contains(d.Delete[0].Reason, tt.reasonIs) {
				t.Errorf("reason %q, want %q", d.Delete[0].Reason, tt.reasonIs)
			}
			if !tt.deleted && (d.Create != 0 || d.Target != 1) {
				t.Errorf("a kept silent node counts toward the size: %+v", d)
			}
		})
	}
}
