package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/compute"
)

func TestBackfillAtMaxReservesBusyNodes(t *testing.T) {
	in := Input{Pools: pool(2, size4), Nodes: []Node{
		{ID: "n1", Pool: "p", State: compute.NodeIdle, Capacity: size4},
		{ID: "n2", Pool: "p", State: compute.NodeRunning, Capacity: size4, Allocated: cores(2)},
	}, Queue: []Run{run("head", PriorityHigh, 0, 2, cores(4)), run("small", PriorityLow, 0, 1, cores(1))}}
	p := Schedule(in)
	want := map[string]string{
		"head":  "waiting for running work to free 1 node (cluster 2/2 nodes)",
		"small": "waiting behind higher-priority runs",
	}
	if diff := cmp.Diff(want, summary(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	wantRes := []Reservation{{Run: "head", Pool: "p", Nodes: []string{"n1", "n2"}}}
	if diff := cmp.Diff(wantRes, p.Reservations); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	// The head cannot start even at max; "small" fits the nodes as they are (once the head
	// has started), so it needs no new node.
	if diff := cmp.Diff([]PoolDemand{{Pool: "p", AtMax: 1}}, p.Demand); diff != "" {
		t.Errorf("demand (-want +got):\n%s", diff)
	}
}

func TestBackfillUsesUnreservedCapacity(t *testing.T) {
	// The pool can grow, so the head reserves only the node that fits it now and waits for
	// one new node; the small run may use the busy node's spare cores, which the head
	// does not wait for.
	in := Input{Pools: pool(4, size4), Nodes: []Node{
		{ID: "n1", Pool: "p", State: compute.NodeIdle, Capacity: size4},
		{ID: "n2", Pool: "p", State: compute.NodeRunning, Capacity: size4, Allocated: cores(2)},
	}, Queue: []Run{run("head", PriorityHigh, 0, 2, cores(4)), run("small", PriorityLow, 0, 1, cores(2)),
		run("big", PriorityLow, 1, 1, cores(4))}}
	p := Schedule(in)
	want := map[string]string{
		"head":  "waiting for 1 node to be added (cluster 2/4 nodes)",
		"small": "on n2",
		"big":   "waiting behind higher-priority runs",
	}
	if diff := cmp.Diff(want, summary(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Reservation{{Run: "head", Pool: "p", Nodes: []string{"n1"}}}, p.Reservations); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]PoolDemand{{Pool: "p", Nodes: 2, Runs: 2}}, p.Demand); diff != "" {
		t.Errorf("demand (-want +got):\n%s", diff)
	}
}

func TestBackfillOtherPoolsUnaffected(t *testing.T) {
	in := Input{
		Pools: []Pool{{ID: "p", MaxNodes: 1, Size: size4}, {ID: "q", MaxNodes: 1, Size: size4}},
		Nodes: append(idle("p", 1, size4), idle("q", 1, size4)...),
		Queue: []Run{run("head", PriorityHigh, 0, 1, cores(4)), run("fill", PriorityHigh, 1, 1, cores(1)),
			{ID: "other", Pool: "q", Priority: PriorityLow, InstanceCount: 1, PerNode: cores(1)}},
	}
	in.Nodes[0].Allocated = cores(1)
	got := summary(Schedule(in))
	want := map[string]string{
		"head":  "waiting for running work to free 1 node (cluster 1/1 nodes)",
		"fill":  "waiting behind runs queued earlier",
		"other": "on q-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

func TestQuotaHeldForRunWaitingForNodes(t *testing.T) {
	// "head" waits for nodes in p and holds its 8 cores of family D, so "later" in pool q
	// (same family) cannot take them.
	in := Input{
		Pools:  []Pool{{ID: "p", MaxNodes: 2, Size: size4}, {ID: "q", MaxNodes: 2, Size: size4}},
		Nodes:  idle("q", 2, size4),
		Quotas: map[string]int64{"D": 10 * 1000},
		Queue: []Run{run("head", PriorityHigh, 0, 2, cores(4)),
			{ID: "later", Pool: "q", Family: "D", InstanceCount: 1, PerNode: cores(4)}},
	}
	got := summary(Schedule(in))
	want := map[string]string{
		"head":  "waiting for 2 nodes to be added (cluster 0/2 nodes)",
		"later": "quota: family D 8/10 cores (8 held for runs waiting for nodes), run needs 4",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

func TestDemand(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want []PoolDemand
	}{{
		name: "scale from zero, gangs counted whole",
		in: Input{Pools: pool(5, size4), Queue: []Run{
			run("a", PriorityMedium, 0, 1, cores(4)), run("b", PriorityMedium, 1, 1, cores(2)),
			run("c", PriorityMedium, 2, 1, cores(2)), run("g", PriorityMedium, 3, 4, cores(4)),
		}},
		want: []PoolDemand{{Pool: "p", Nodes: 2, Runs: 2, AtMax: 1}},
	}, {
		name: "provisioning nodes count",
		in: Input{Pools: pool(5, size4), Nodes: []Node{{ID: "n1", Pool: "p", State: compute.NodeProvisioning}, {ID: "n2", Pool: "p", State: compute.NodeProvisioning}},
			Queue: []Run{run("g", PriorityMedium, 0, 3, cores(4))}},
		want: []PoolDemand{{Pool: "p", Nodes: 1, Runs: 1}},
	}, {
		name: "quota and user limits cap demand",
		in: Input{Pools: pool(9, size4), Quotas: map[string]int64{"D": 8000}, DefaultUserLimit: 1, Queue: []Run{
			run("a", PriorityMedium, 0, 1, cores(4)),
			{ID: "a2", Pool: "p", User: "u-a", Family: "D", InstanceCount: 1, PerNode: cores(4), SubmitTime: t0.Add(1)},
			run("b", PriorityMedium, 2, 1, cores(4)), run("c", PriorityMedium, 3, 1, cores(4)),
		}},
		// a and b fill the 8-core quota; a2 is over its user's limit, c over quota.
		want: []PoolDemand{{Pool: "p", Nodes: 2, Runs: 2}},
	}, {
		name: "no demand for pools with nothing waiting",
		in:   Input{Pools: pool(5, size4), Nodes: idle("p", 1, size4), Queue: []Run{run("a", PriorityMedium, 0, 1, cores(1))}},
		want: []PoolDemand{{Pool: "p"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Schedule(tt.in).Demand); diff != "" {
				t.Errorf("demand (-want +got):\n%s", diff)
			}
		})
	}
}
