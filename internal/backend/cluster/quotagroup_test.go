package cluster

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/scheduler"
	"github.com/hangar-ml/hangar/internal/sizes"
)

// Two clusters of one quota group of 2 instances: a run holding 2 nodes of one keeps a run of
// the other waiting, with a reason in instances, though its own cluster has room.
func TestQuotaGroupSharedAcrossClusters(t *testing.T) {
	small := sizes.Size{Name: "s", Family: "A", Cores: 1, MemoryBytes: resources.Gi}
	big := sizes.Size{Name: "b", Family: "B", Cores: 4, MemoryBytes: 4 * resources.Gi}
	member := func(name string, z sizes.Size) *pool {
		return &pool{size: z, spec: compute.Spec{Name: name, Type: compute.TypeCluster, Cluster: &compute.ClusterSpec{
			Size: z.Name, MaxInstances: 2, QuotaGroup: "serverless", QuotaGroupInstances: 2}}}
	}
	pools := map[string]*pool{"serverless_s": member("serverless_s", small), "serverless_b": member("serverless_b", big)}
	running := &job.Run{ID: "a", Compute: "serverless_s", Spec: job.Spec{Resources: job.Resources{InstanceCount: 2}}}
	queued := &job.Run{ID: "b", Compute: "serverless_b"}
	big3 := &job.Run{ID: "c", Compute: "serverless_b", Spec: job.Spec{Resources: job.Resources{InstanceCount: 3}}}

	in := scheduler.Input{Now: time.Unix(0, 0), Quotas: map[string]int64{}}
	addGroupQuotas(pools, in.Quotas)
	if got := in.Quotas["group:serverless"]; got != 2*resources.Core {
		t.Fatalf("group quota %d, want 2 instances", got)
	}
	for _, name := range []string{"serverless_b", "serverless_s"} {
		in.Pools = append(in.Pools, scheduler.Pool{ID: name, MaxNodes: 2, Size: pools[name].size.Vector()})
	}
	fam, cost := quotaOf(pools["serverless_s"], running.Spec)
	in.Running = append(in.Running, scheduler.Running{ID: "a", Family: fam, QuotaCPU: cost, Nodes: []string{"n1", "n2"},
		PerNode: pools["serverless_s"].size.Vector()})
	in.Nodes = append(in.Nodes,
		scheduler.Node{ID: "n1", Pool: "serverless_s", State: compute.NodeRunning, Capacity: small.Vector(), Allocated: small.Vector()},
		scheduler.Node{ID: "n2", Pool: "serverless_s", State: compute.NodeRunning, Capacity: small.Vector(), Allocated: small.Vector()})
	fam, cost = quotaOf(pools["serverless_b"], queued.Spec)
	in.Queue = append(in.Queue, scheduler.Run{ID: "b", Pool: "serverless_b", InstanceCount: 1, Family: fam, QuotaCPU: cost,
		PerNode: big.Vector(), SubmitTime: time.Unix(1, 0)})
	plan := scheduler.Schedule(in)
	if len(plan.Placements) != 0 || len(plan.Waiting) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	runs := []*job.Run{running, queued, big3}
	why, ok := groupReason(plan.Waiting[0], pools["serverless_b"], runs)
	if want := "waiting for serverless quota: other jobs hold the pool's max_instances (2), the job needs 1"; !ok || why != want {
		t.Errorf("reason %q (%v), want %q", why, ok, want)
	}
	w := scheduler.Wait{Run: "c", Pool: "serverless_b", Cause: scheduler.CauseImpossible, Unschedulable: true,
		Reason: "needs 3 cores of family group:serverless, quota is 2"}
	if why, _ := groupReason(w, pools["serverless_b"], runs); why != "waiting for serverless quota: the job needs 3 instances, the pool's max_instances is 2 (raise it with hangar compute update)" {
		t.Errorf("reason %q", why)
	}
	// A cluster outside any group keeps the scheduler's reason, and its size's family.
	plain := &pool{size: small, spec: compute.Spec{Cluster: &compute.ClusterSpec{}}}
	if _, ok := groupReason(plan.Waiting[0], plain, runs); ok {
		t.Error("a plain cluster's reason was rewritten")
	}
	if fam, cost := quotaOf(plain, running.Spec); fam != "A" || cost != 0 {
		t.Errorf("plain cluster: family %s cost %d", fam, cost)
	}
}
