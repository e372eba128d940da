package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/compute"
)

// isoPool is pool "p" of an isolated size, iso-4, with size4 nodes.
func isoPool(maxNodes int) []Pool {
	return []Pool{{ID: "p", MaxNodes: maxNodes, Size: size4, SizeName: "iso-4"}}
}

// isoRun is run() of an isolated size.
func isoRun(id string, sec, n int, c int64) Run {
	r := run(id, PriorityMedium, sec, n, cores(c))
	r.Isolated = true
	return r
}

// busyNode is a ready node of pool p that runs work taking alloc cores.
func busyNode(id string, alloc int64) Node {
	return Node{ID: id, Pool: "p", State: compute.NodeRunning, Capacity: size4, Allocated: cores(alloc)}
}

func TestScheduleIsolated(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want map[string]string
	}{{
		name: "isolated runs that would share a node get one each",
		in: Input{Pools: isoPool(2), Nodes: idle("p", 2, size4), Queue: []Run{
			isoRun("a", 0, 1, 1), isoRun("b", 1, 1, 1)}},
		want: map[string]string{"a": "on p-1", "b": "on p-2"},
	}, {
		name: "runs of a shared size pack on the same nodes",
		in: Input{Pools: pool(2, size4), Nodes: idle("p", 2, size4), Queue: []Run{
			run("a", PriorityMedium, 0, 1, cores(1)), run("b", PriorityMedium, 1, 1, cores(1))}},
		want: map[string]string{"a": "on p-1", "b": "on p-1"},
	}, {
		name: "nothing joins a node placed an isolated run in the same pass",
		in: Input{Pools: isoPool(1), Nodes: idle("p", 1, size4), Queue: []Run{
			isoRun("a", 0, 1, 1), run("b", PriorityMedium, 1, 1, cores(1))}},
		want: map[string]string{"a": "on p-1", "b": "waiting for running work to free 1 node (cluster 1/1 nodes)"},
	}, {
		name: "an isolated run does not join a busy node",
		in: Input{Pools: isoPool(1), Nodes: []Node{busyNode("p-1", 1)},
			Running: []Running{{ID: "r0", User: "x", Nodes: []string{"p-1"}, PerNode: cores(1)}},
			Queue:   []Run{isoRun("a", 0, 1, 1)}},
		want: map[string]string{"a": "waiting for a node of its own (size iso-4 is isolated): running work to free 1 node (cluster 1/1 nodes)"},
	}, {
		name: "a run that holds no resources still makes its node busy",
		in: Input{Pools: isoPool(1), Nodes: idle("p", 1, size4),
			Running: []Running{{ID: "r0", User: "x", Nodes: []string{"p-1"}}},
			Queue:   []Run{isoRun("a", 0, 1, 1)}},
		want: map[string]string{"a": "waiting for a node of its own (size iso-4 is isolated): running work to free 1 node (cluster 1/1 nodes)"},
	}, {
		name: "nothing joins a node an isolated run holds",
		in: Input{Pools: isoPool(1), Nodes: []Node{busyNode("p-1", 1)},
			Running: []Running{{ID: "r0", User: "x", Nodes: []string{"p-1"}, PerNode: cores(1), Isolated: true}},
			Queue:   []Run{run("b", PriorityMedium, 0, 1, cores(1))}},
		want: map[string]string{"b": "waiting for running work to free 1 node (cluster 1/1 nodes)"},
	}, {
		name: "an isolated gang waits for empty nodes to be added",
		in: Input{Pools: isoPool(4), Nodes: []Node{busyNode("p-1", 1), {ID: "p-2", Pool: "p", State: compute.NodeIdle, Capacity: size4}},
			Queue: []Run{isoRun("g", 0, 2, 1)}},
		want: map[string]string{"g": "waiting for 2 nodes of their own (size iso-4 is isolated): 1 node to be added (cluster 2/4 nodes)"},
	}, {
		name: "isolated runs prefer empty nodes, shared ones pack onto busy ones",
		in: Input{Pools: isoPool(2), Nodes: []Node{{ID: "p-1", Pool: "p", State: compute.NodeIdle, Capacity: size4}, busyNode("p-2", 0)},
			Running: []Running{{ID: "r0", User: "x", Nodes: []string{"p-2"}}},
			Queue:   []Run{run("b", PriorityMedium, 0, 1, cores(1)), isoRun("a", 1, 1, 1)}},
		want: map[string]string{"b": "on p-2", "a": "on p-1"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, summary(Schedule(tt.in))); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// The autoscaler creates what Demand asks for: an isolated run counts a whole node, where
// runs of a shared size that fit together count one node between them.
func TestDemandIsolated(t *testing.T) {
	tests := []struct {
		name  string
		queue []Run
		nodes []Node
		want  PoolDemand
	}{
		{"shared runs fit one node", []Run{run("a", PriorityMedium, 0, 1, cores(1)), run("b", PriorityMedium, 1, 1, cores(1))}, nil,
			PoolDemand{Pool: "p", Nodes: 1, Runs: 1}},
		{"isolated runs need a node each", []Run{isoRun("a", 0, 1, 1), isoRun("b", 1, 1, 1), isoRun("c", 2, 1, 1)}, nil,
			PoolDemand{Pool: "p", Nodes: 3, Runs: 3}},
		{"a provisioning node serves one isolated run", []Run{isoRun("a", 0, 1, 1), isoRun("b", 1, 1, 1)},
			[]Node{{ID: "p-1", Pool: "p", State: compute.NodeProvisioning}}, PoolDemand{Pool: "p", Nodes: 1, Runs: 1}},
		{"an isolated gang counts every node", []Run{isoRun("g", 0, 3, 1)}, nil, PoolDemand{Pool: "p", Nodes: 3, Runs: 1}},
		{"beyond max_instances isolated runs wait", []Run{isoRun("a", 0, 1, 1), isoRun("b", 1, 1, 1), isoRun("c", 2, 1, 1), isoRun("d", 3, 1, 1), isoRun("e", 4, 1, 1)}, nil,
			PoolDemand{Pool: "p", Nodes: 4, Runs: 4, AtMax: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Schedule(Input{Pools: isoPool(4), Nodes: tt.nodes, Queue: tt.queue})
			if diff := cmp.Diff([]PoolDemand{tt.want}, p.Demand); diff != "" {
				t.Errorf("demand (-want +got):\n%s", diff)
			}
		})
	}
}
