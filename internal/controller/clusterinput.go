package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/scheduler"
	"github.com/hangar-ml/hangar/internal/sizes"
)

// Workspace settings read by the cluster scheduler.
const (
	// SettingQuotaPrefix + a size family = the most cores that family's runs may hold at once.
	SettingQuotaPrefix = "quota.family."
	// SettingUserMaxRuns bounds each user's concurrently placed cluster runs (0 = no limit).
	SettingUserMaxRuns = "user_max_runs"
)

// schedulerInput snapshots the clusters: nodes with what placed runs hold, the queue, quotas.
func (c *Controller) schedulerInput(ctx context.Context, pools map[string]*pool, active []*job.Run, now time.Time) (scheduler.Input, error) {
	in := scheduler.Input{Now: now, Quotas: map[string]int64{}, UserLimits: map[string]int{}}
	quotas, err := c.Store.Settings(ctx, SettingQuotaPrefix)
	if err != nil {
		return in, err
	}
	for k, v := range quotas {
		if cores, err := strconv.ParseFloat(v, 64); err == nil {
			in.Quotas[strings.TrimPrefix(k, SettingQuotaPrefix)] = int64(cores * resources.Core)
		}
	}
	if v, ok, _ := c.Store.Setting(ctx, SettingUserMaxRuns); ok {
		in.DefaultUserLimit, _ = strconv.Atoi(v)
	}
	allocated := map[string]resources.Vector{}
	for _, r := range active {
		p := pools[r.Compute]
		if p == nil {
			continue
		}
		per := runRequest(r.Spec, p.size)
		if len(r.Handle) == 0 {
			if r.Status == job.Queued {
				prio, _ := scheduler.ParsePriority(r.Spec.QueueSettings.Priority) // validated at submit
				in.Queue = append(in.Queue, scheduler.Run{ID: r.ID, Pool: r.Compute, User: runUser(r),
					Priority: prio, SubmitTime: r.CreatedAt,
					InstanceCount: max(r.Spec.Resources.InstanceCount, 1), PerNode: per, Family: p.size.Family})
			}
			continue
		}
		var h cluster.Handle
		if json.Unmarshal(r.Handle, &h) != nil {
			continue
		}
		in.Running = append(in.Running, scheduler.Running{ID: r.ID, User: runUser(r), Family: p.size.Family, Nodes: h.Nodes, PerNode: per})
		for _, n := range h.Nodes {
			allocated[n] = allocated[n].Add(per)
		}
	}
	for _, name := range sortedPoolNames(pools) {
		p := pools[name]
		in.Pools = append(in.Pools, scheduler.Pool{ID: name, MaxNodes: p.spec.Cluster.MaxInstances, Size: p.size.Vector()})
		for _, n := range p.nodes {
			in.Nodes = append(in.Nodes, scheduler.Node{ID: n.ID, Pool: name, State: scheduler.NodeState(n.State),
				Capacity: n.Capacity, Allocated: allocated[n.ID], Labels: n.Labels})
		}
	}
	return in, nil
}

// runRequest is what a run takes on each node: its resources.properties (Hangar extension:
// cores, memory, gpus) or, as on Azure ML clusters, the whole node.
func runRequest(sp job.Spec, size sizes.Size) resources.Vector {
	props := sp.Resources.Properties
	whole := size.Vector()
	if len(props) == 0 {
		return whole
	}
	v := whole
	if x, ok := props["cores"]; ok {
		if m, err := resources.ParseCPU(fmt.Sprint(x)); err == nil {
			v.MilliCPU = m
		}
	}
	if x, ok := props["memory"]; ok {
		if b, err := resources.ParseMemory(fmt.Sprint(x)); err == nil {
			v.Memory = b
		}
	}
	if x, ok := props["gpus"]; ok {
		if g, err := strconv.Atoi(fmt.Sprint(x)); err == nil {
			v.GPU = int64(g)
		}
	}
	return v
}

// runUser is who submitted a run (the CLI records it), for per-user limits.
func runUser(r *job.Run) string {
	if u := r.Spec.Properties["created_by"]; u != "" {
		return u
	}
	return "default"
}

// runsByNode lists the placed runs on each node.
func runsByNode(active []*job.Run) map[string][]string {
	out := map[string][]string{}
	for _, r := range active {
		var h cluster.Handle
		if len(r.Handle) == 0 || json.Unmarshal(r.Handle, &h) != nil || h.Pool == "" {
			continue
		}
		for _, n := range h.Nodes {
			out[n] = append(out[n], r.ID)
		}
	}
	return out
}

func sortedPoolNames(pools map[string]*pool) []string {
	names := make([]string, 0, len(pools))
	for n := range pools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
