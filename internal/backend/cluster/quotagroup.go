package cluster

import (
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/scheduler"
)

// A quota group (compute.ClusterSpec.QuotaGroup, design 0017) is a quota shared by several
// clusters and counted in instances: the serverless pool's clusters, one per size. It reuses
// the scheduler's family quota: the group is a family of its own, each instance a run holds
// costs one core of it, and its quota is the group's instance count.

// groupFamily is the scheduler family that stands for a quota group.
func groupFamily(group string) string { return "group:" + group }

// quotaOf is the family a run of the pool counts against and its cost (0: the scheduler's
// default, its cores).
func quotaOf(p *pool, sp job.Spec) (family string, cost int64) {
	if g := p.spec.Cluster.QuotaGroup; g != "" {
		return groupFamily(g), int64(max(sp.Resources.InstanceCount, 1)) * resources.Core
	}
	return p.size.Family, 0
}

// addGroupQuotas sets each quota group's quota, from its clusters' spec.
func addGroupQuotas(pools map[string]*pool, quotas map[string]int64) {
	for _, p := range pools {
		if cs := p.spec.Cluster; cs.QuotaGroup != "" {
			quotas[groupFamily(cs.QuotaGroup)] = int64(cs.QuotaGroupInstances) * resources.Core
		}
	}
}

// groupReason rewrites, in instances, the scheduler's reason for a run of a quota group's
// cluster that waits for the group's quota; ok is false for any other wait.
func groupReason(w scheduler.Wait, p *pool, runs []*job.Run) (string, bool) {
	if p == nil || p.spec.Cluster.QuotaGroup == "" {
		return "", false
	}
	cs := p.spec.Cluster
	family := groupFamily(cs.QuotaGroup)
	if !strings.Contains(w.Reason, "family "+family) {
		return "", false
	}
	need := 1
	for _, r := range runs {
		if r.ID == w.Run {
			need = max(r.Spec.Resources.InstanceCount, 1)
		}
	}
	switch {
	case w.Cause == scheduler.CauseBehind:
		return fmt.Sprintf("waiting for %s quota behind jobs queued earlier (max_instances %d)", cs.QuotaGroup, cs.QuotaGroupInstances), true
	case need > cs.QuotaGroupInstances:
		return fmt.Sprintf("waiting for %s quota: the job needs %d instances, the pool's max_instances is %d (raise it with hangar compute update)",
			cs.QuotaGroup, need, cs.QuotaGroupInstances), true
	}
	return fmt.Sprintf("waiting for %s quota: other jobs hold the pool's max_instances (%d), the job needs %d",
		cs.QuotaGroup, cs.QuotaGroupInstances, need), true
}
