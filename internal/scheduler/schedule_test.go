package scheduler

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

var (
	t0    = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	size4 = resources.Vector{MilliCPU: 4 * resources.Core, Memory: 16 * resources.Gi}
	gpu2  = resources.Vector{MilliCPU: 8 * resources.Core, Memory: 64 * resources.Gi, GPU: 2}
)

// cores is a request for c whole cores and c Gi of memory.
func cores(c int64) resources.Vector {
	return resources.Vector{MilliCPU: c * resources.Core, Memory: c * resources.Gi}
}

// idle returns ready nodes p-1 … p-n of pool p with capacity size, nothing allocated.
func idle(p string, n int, size resources.Vector) []Node {
	var out []Node
	for i := 1; i <= n; i++ {
		out = append(out, Node{ID: p + "-" + string(rune('0'+i)), Pool: p, State: compute.NodeIdle, Capacity: size})
	}
	return out
}

// run returns a queued run of pool "p" submitted sec seconds after t0.
func run(id string, prio Priority, sec int, n int, per resources.Vector) Run {
	return Run{ID: id, Pool: "p", User: "u-" + id, Priority: prio, SubmitTime: t0.Add(time.Duration(sec) * time.Second),
		InstanceCount: n, PerNode: per, Family: "D"}
}

func pool(maxNodes int, size resources.Vector) []Pool {
	return []Pool{{ID: "p", MaxNodes: maxNodes, Size: size}}
}

// summary renders a plan compactly: placements as run→nodes, waits as run→reason.
func summary(p Plan) map[string]string {
	out := map[string]string{}
	for _, pl := range p.Placements {
		out[pl.Run] = "on " + join(pl.Nodes)
	}
	for _, w := range p.Waiting {
		out[w.Run] = w.Reason
		if w.Unschedulable {
			out[w.Run] = "UNSCHEDULABLE " + w.Reason
		}
	}
	return out
}

func join(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

// ruleCases are small snapshots, one rule each, with every run's outcome.
var ruleCases = []struct {
	name string
	in   Input
	want map[string]string
}{{
	name: "priority beats submit time",
	in: Input{Pools: pool(1, size4), Nodes: idle("p", 1, size4), Queue: []Run{
		run("low", PriorityLow, 0, 1, cores(4)), run("high", PriorityHigh, 9, 1, cores(4)), run("med", PriorityMedium, 5, 1, cores(4)),
	}},
	want: map[string]string{"high": "on p-1", "med": "waiting for running work to free 1 node (cluster 1/1 nodes)",
		"low": "waiting behind higher-priority runs"},
}, {
	name: "FIFO within a priority, ties by ID",
	in: Input{Pools: pool(1, size4), Nodes: idle("p", 1, size4), Queue: []Run{
		run("b", PriorityMedium, 0, 1, cores(4)), run("c", PriorityMedium, -1, 1, cores(4)), run("a", PriorityMedium, 0, 1, cores(4)),
	}},
	want: map[string]string{"c": "on p-1", "a": "waiting for running work to free 1 node (cluster 1/1 nodes)",
		"b": "waiting behind runs queued earlier"},
}, {
	name: "small runs share a node; a gang takes distinct nodes",
	in: Input{Pools: pool(3, size4), Nodes: idle("p", 3, size4), Queue: []Run{
		run("a", PriorityMedium, 0, 1, cores(2)), run("b", PriorityMedium, 1, 1, cores(2)), run("g", PriorityMedium, 2, 2, cores(3)),
	}},
	want: map[string]string{"a": "on p-1", "b": "on p-1", "g": "on p-2,p-3"},
}, {
	name: "gang gets all or nothing",
	in: Input{Pools: pool(2, size4), Nodes: []Node{
		{ID: "p-1", Pool: "p", State: compute.NodeIdle, Capacity: size4},
		{ID: "p-2", Pool: "p", State: compute.NodeRunning, Capacity: size4, Allocated: cores(3)},
	}, Queue: []Run{run("g", PriorityMedium, 0, 2, cores(2))}},
	want: map[string]string{"g": "waiting for running work to free 1 node (cluster 2/2 nodes)"},
}, {
	name: "only idle and running nodes take work",
	in: Input{Pools: pool(9, size4), Nodes: []Node{
		{ID: "n1", Pool: "p", State: compute.NodeProvisioning, Capacity: size4},
		{ID: "n2", Pool: "p", State: compute.NodeReleasing, Capacity: size4},
		{ID: "n3", Pool: "p", State: compute.NodePreempted, Capacity: size4},
		{ID: "n4", Pool: "p", State: compute.NodeUnusable, Capacity: size4},
		{ID: "n5", Pool: "p", State: compute.NodeRunning, Capacity: size4, Allocated: cores(1)},
	}, Queue: []Run{run("a", PriorityMedium, 0, 1, cores(3)), run("b", PriorityMedium, 1, 1, cores(1))}},
	want: map[string]string{"a": "on n5", "b": "waiting for 1 node to start"},
}, {
	name: "waiting for nodes to start",
	in: Input{Pools: pool(4, size4), Nodes: []Node{
		{ID: "n1", Pool: "p", State: compute.NodeProvisioning},
		{ID: "n2", Pool: "p", State: compute.NodeProvisioning},
		{ID: "n3", Pool: "p", State: compute.NodeIdle, Capacity: size4},
	}, Queue: []Run{run("g", PriorityMedium, 0, 3, cores(4))}},
	want: map[string]string{"g": "waiting for 2 nodes to start"},
}, {
	name: "waiting for scale-up",
	in: Input{Pools: pool(4, size4), Nodes: []Node{{ID: "n1", Pool: "p", State: compute.NodeProvisioning}},
		Queue: []Run{run("g", PriorityMedium, 0, 3, cores(4)), run("h", PriorityMedium, 1, 1, cores(4))}},
	want: map[string]string{"g": "waiting for 1 node to start and 2 more to be added (cluster 1/4 nodes)",
		"h": "waiting behind runs queued earlier"},
}, {
	name: "impossible runs are flagged",
	in: Input{Pools: []Pool{{ID: "p", MaxNodes: 2, Size: gpu2}}, Quotas: map[string]int64{"D": 16 * resources.Core}, Queue: []Run{
		run("gpus", PriorityMedium, 0, 1, resources.Vector{GPU: 4}),
		run("cpus", PriorityMedium, 1, 1, cores(9)),
		run("mem", PriorityMedium, 2, 1, resources.Vector{Memory: 65 * resources.Gi}),
		run("nodes", PriorityMedium, 3, 3, resources.Vector{GPU: 1}),
		{ID: "quota", Pool: "p", Family: "D", InstanceCount: 2, PerNode: cores(8), QuotaCPU: 16500},
		{ID: "nowhere", Pool: "q", InstanceCount: 1},
	}},
	want: map[string]string{
		"gpus":    "UNSCHEDULABLE needs 4 GPUs per node, size has 2",
		"cpus":    "UNSCHEDULABLE needs 9 cores per node, size has 8",
		"mem":     "UNSCHEDULABLE needs 65Gi memory per node, size has 64Gi",
		"nodes":   "UNSCHEDULABLE needs 3 nodes, cluster max_instances is 2",
		"quota":   "UNSCHEDULABLE needs 16.5 cores of family D, quota is 16",
		"nowhere": "UNSCHEDULABLE unknown cluster q",
	},
}, {
	name: "family quota is a hard limit and holds for the first run that waits",
	in: Input{Pools: pool(9, size4), Nodes: idle("p", 4, size4), Quotas: map[string]int64{"D": 8 * resources.Core},
		Running: []Running{{ID: "r0", User: "x", Family: "D", Nodes: []string{"elsewhere"}, PerNode: cores(4)}},
		Queue: []Run{run("a", PriorityHigh, 0, 2, cores(4)), run("b", PriorityMedium, 1, 1, cores(2)),
			{ID: "other", Pool: "p", Family: "E", InstanceCount: 1, PerNode: cores(4)}}},
	want: map[string]string{"a": "quota: family D 4/8 cores, run needs 8",
		"b": "waiting behind higher-priority runs for family D quota", "other": "on p-1"},
}, {
	name: "per-user run limit",
	in: Input{Pools: pool(9, size4), Nodes: idle("p", 4, size4), DefaultUserLimit: 2, UserLimits: map[string]int{"bob": 0},
		Running: []Running{{ID: "r0", User: "alice"}},
		Queue: []Run{
			{ID: "a1", Pool: "p", User: "alice", InstanceCount: 1, PerNode: cores(1), SubmitTime: t0},
			{ID: "a2", Pool: "p", User: "alice", InstanceCount: 1, PerNode: cores(1), SubmitTime: t0.Add(1)},
			{ID: "b1", Pool: "p", User: "bob", InstanceCount: 1, PerNode: cores(1), SubmitTime: t0.Add(2)},
			{ID: "b2", Pool: "p", User: "bob", InstanceCount: 1, PerNode: cores(1), SubmitTime: t0.Add(3)},
			{ID: "b3", Pool: "p", User: "bob", InstanceCount: 1, PerNode: cores(1), SubmitTime: t0.Add(4)},
		}},
	want: map[string]string{"a1": "on p-1", "a2": "user alice has 2/2 runs running", "b1": "on p-1", "b2": "on p-1", "b3": "on p-1"},
}, {
	name: "node selector",
	in: Input{Pools: pool(2, size4), Nodes: []Node{
		{ID: "n1", Pool: "p", State: compute.NodeIdle, Capacity: size4, Labels: map[string]string{"zone": "a"}},
		{ID: "n2", Pool: "p", State: compute.NodeIdle, Capacity: size4, Labels: map[string]string{"zone": "b"}},
	}, Queue: []Run{{ID: "a", Pool: "p", InstanceCount: 1, PerNode: cores(1), NodeSelector: map[string]string{"zone": "b"}}}},
	want: map[string]string{"a": "on n2"},
}}

func TestScheduleRules(t *testing.T) {
	for _, tt := range ruleCases {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(Schedule(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// A run that waits behind others keeps its reason while the runs ahead of it start one by one:
// a reason that named the run ahead would change, and be written again, for every waiting run
// at every start.
func TestWaitingReasonStableAsTheQueueMoves(t *testing.T) {
	queue := []Run{run("a", PriorityMedium, 0, 1, cores(4)), run("b", PriorityMedium, 1, 1, cores(4)),
		run("c", PriorityMedium, 2, 1, cores(4)), run("d", PriorityMedium, 3, 1, cores(4))}
	var reasons []string
	for started := 0; started < 2; started++ {
		// One node, busy with the run that started last; the rest wait in order.
		nodes := idle("p", 1, size4)
		nodes[0].Allocated = size4
		got := summary(Schedule(Input{Now: t0, Pools: pool(1, size4), Nodes: nodes, Queue: queue[started:]}))
		reasons = append(reasons, got["d"])
	}
	if reasons[0] != reasons[1] || reasons[0] == "" {
		t.Errorf("d's reason changed as the run ahead started: %q", reasons)
	}
}
