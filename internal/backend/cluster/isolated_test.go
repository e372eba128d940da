package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/scheduler"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// A cluster's runs share its nodes unless its size is isolated in the catalog or the cluster
// says isolated: then two runs that would fit on one node take one each, and a run that finds
// every node busy says it waits for a node of its own.
func TestIsolatedClusterRunsGetNodesOfTheirOwn(t *testing.T) {
	b, _ := newBackend(t)
	shared := sizes.Size{Name: "box", Family: "A", Cores: 4, MemoryBytes: 4 * resources.Gi}
	whole := shared
	whole.Name, whole.Isolated = "whole-box", true
	mk := func(name string, z sizes.Size, isolated bool, nodes int) *pool {
		p := &pool{size: z, spec: compute.Spec{Name: name, Type: compute.TypeCluster,
			Cluster: &compute.ClusterSpec{Size: z.Name, MaxInstances: nodes, Isolated: isolated}}}
		for i := range nodes {
			p.nodes = append(p.nodes, &store.Node{ID: name + "-" + string(rune('1'+i)), Pool: name,
				State: compute.NodeIdle, Capacity: z.Vector()})
		}
		return p
	}
	pools := map[string]*pool{"shared": mk("shared", shared, false, 2), "bysize": mk("bysize", whole, false, 2),
		"byspec": mk("byspec", shared, true, 2), "one": mk("one", whole, false, 1)}
	small := job.Spec{Resources: job.Resources{Properties: map[string]any{"cores": 1}}}
	var runs []*job.Run
	for i, c := range []string{"shared", "shared", "bysize", "bysize", "byspec", "byspec", "one", "one"} {
		runs = append(runs, &job.Run{ID: c + "-" + string(rune('a'+i)), Compute: c, Status: job.Queued, Spec: small,
			CreatedAt: time.Unix(int64(i), 0)})
	}
	in, err := b.schedulerInput(t.Context(), pools, runs, time.Unix(100, 0))
	if err != nil {
		t.Fatal(err)
	}
	plan := scheduler.Schedule(in)
	nodesOf := map[string][]string{}
	for _, pl := range plan.Placements {
		c := strings.SplitN(pl.Run, "-", 2)[0]
		nodesOf[c] = append(nodesOf[c], pl.Nodes...)
	}
	if n := nodesOf["shared"]; len(n) != 2 || n[0] != n[1] {
		t.Errorf("runs of a shared size on %v, want both on one node", n)
	}
	for _, c := range []string{"bysize", "byspec"} {
		if n := nodesOf[c]; len(n) != 2 || n[0] == n[1] {
			t.Errorf("isolated runs of %s on %v, want one node each", c, n)
		}
	}
	want := "waiting for a node of its own (size whole-box is isolated): running work to free 1 node (cluster 1/1 nodes)"
	if len(plan.Waiting) != 1 || plan.Waiting[0].Reason != want {
		t.Errorf("waiting %+v, want one run of cluster one: %q", plan.Waiting, want)
	}
	// Once placed, the run keeps its node to itself on the next pass.
	runs[6].Placement, runs[7].Status = &job.Placement{Nodes: nodesOf["one"]}, job.Queued
	runs[7].Spec = job.Spec{Resources: job.Resources{Properties: map[string]any{"cores": 1}}}
	in, err = b.schedulerInput(t.Context(), map[string]*pool{"one": pools["one"]}, runs[6:], time.Unix(101, 0))
	if err != nil {
		t.Fatal(err)
	}
	if plan := scheduler.Schedule(in); len(plan.Placements) != 0 || len(plan.Waiting) != 1 || plan.Waiting[0].Reason != want {
		t.Errorf("second pass: %+v", plan)
	}
}
