package cluster

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/scheduler"
)

// Workspace settings read by the cluster scheduler.
const (
	// SettingQuotaPrefix + a size family = the most cores that family's runs may hold at once.
	SettingQuotaPrefix = "quota.family."
	// SettingUserMaxRuns bounds each user's concurrently placed cluster runs (0 = no limit).
	SettingUserMaxRuns = "user_max_runs"
)

// schedulerInput snapshots the clusters: nodes with what placed runs hold, the queue, quotas.
func (b *Backend) schedulerInput(ctx context.Context, pools map[string]*pool, runs []*job.Run, now time.Time) (scheduler.Input, error) {
	in := scheduler.Input{Now: now, Quotas: map[string]int64{}, UserLimits: map[string]int{}}
	quotas, err := b.Store.Settings(ctx, SettingQuotaPrefix)
	if err != nil {
		return in, err
	}
	for k, v := range quotas {
		if cores, err := strconv.ParseFloat(v, 64); err == nil {
			in.Quotas[strings.TrimPrefix(k, SettingQuotaPrefix)] = int64(cores * resources.Core)
		}
	}
	addGroupQuotas(pools, in.Quotas)
	if v, ok, _ := b.Store.Setting(ctx, SettingUserMaxRuns); ok {
		in.DefaultUserLimit, _ = strconv.Atoi(v)
	}
	allocated := map[string]resources.Vector{}
	for _, r := range runs {
		p := pools[r.Compute]
		if p == nil {
			continue
		}
		per := request(r.Spec, p.size)
		family, cost := quotaOf(p, r.Spec)
		switch {
		case r.Placement != nil:
			in.Running = append(in.Running, scheduler.Running{ID: r.ID, User: runUser(r), Family: family,
				Nodes: r.Placement.Nodes, PerNode: per, QuotaCPU: cost, Isolated: p.isolated()})
			for _, n := range r.Placement.Nodes {
				allocated[n] = allocated[n].Add(per)
			}
		case r.Status == job.Queued && len(r.Handle) == 0:
			prio, _ := scheduler.ParsePriority(r.Spec.QueueSettings.Priority) // validated at submit
			in.Queue = append(in.Queue, scheduler.Run{ID: r.ID, Pool: r.Compute, User: runUser(r),
				Priority: prio, SubmitTime: r.CreatedAt,
				InstanceCount: max(r.Spec.Resources.InstanceCount, 1), PerNode: per, Family: family, QuotaCPU: cost,
				Isolated: p.isolated()})
		}
	}
	for _, name := range sortedPoolNames(pools) {
		p := pools[name]
		in.Pools = append(in.Pools, scheduler.Pool{ID: name, MaxNodes: p.spec.Cluster.MaxInstances, Size: p.size.Vector(),
			SizeName: p.size.Name})
		for _, n := range p.nodes {
			in.Nodes = append(in.Nodes, scheduler.Node{ID: n.ID, Pool: name, State: n.State,
				Capacity: n.Capacity, Allocated: allocated[n.ID], Labels: n.Labels})
		}
	}
	return in, nil
}

// runUser is who submitted a run (the CLI records it), for per-user limits.
func runUser(r *job.Run) string {
	if u := r.Spec.Properties["created_by"]; u != "" {
		return u
	}
	return "default"
}

// runsByNode lists the runs placed on each node: those placed before, and this pass's.
func runsByNode(runs []*job.Run, placed []backend.Placed) map[string][]string {
	out := map[string][]string{}
	for _, r := range runs {
		if r.Placement == nil {
			continue
		}
		for _, n := range r.Placement.Nodes {
			out[n] = append(out[n], r.ID)
		}
	}
	for _, p := range placed {
		for _, n := range p.Placement.Nodes {
			if !slices.Contains(out[n], p.Run) {
				out[n] = append(out[n], p.Run)
			}
		}
	}
	return out
}

// autoscalerInput describes every pool's nodes, demand and backoff.
func (b *Backend) autoscalerInput(ctx context.Context, pools map[string]*pool, plan scheduler.Plan, placed []backend.Placed,
	runs []*job.Run, now time.Time) (autoscaler.Input, error) {
	preempted, err := b.Store.Cluster.Preemptions(ctx)
	if err != nil {
		return autoscaler.Input{}, err
	}
	reserved := map[string]bool{}
	for _, r := range plan.Reservations {
		for _, n := range r.Nodes {
			reserved[n] = true
		}
	}
	demand := map[string]scheduler.PoolDemand{}
	for _, d := range plan.Demand {
		demand[d.Pool] = d
	}
	runsOn := runsByNode(runs, placed)
	in := autoscaler.Input{Now: now, Policy: b.Policy}
	for _, name := range sortedPoolNames(pools) {
		p := pools[name]
		cs := p.spec.Cluster
		ap := autoscaler.Pool{ID: name, Min: cs.MinInstances, Max: cs.MaxInstances,
			IdleTimeBeforeScaleDown: time.Duration(cs.IdleTimeBeforeScaleDown) * time.Second,
			Tier:                    autoscaler.Tier(cs.Tier), Demand: demand[name].Nodes, DemandRuns: demand[name].Runs,
			Backoff: b.backoff(name)}
		for _, n := range p.nodes {
			an := autoscaler.Node{ID: n.ID, State: n.State, CreatedAt: n.CreatedAt,
				JoinedAt: n.JoinedAt, JoinBy: n.JoinDeadline, IdleSince: n.IdleSince, Reserved: reserved[n.ID],
				LastSeen: n.LastHeartbeat, Gone: n.State == compute.NodeUnusable && n.StateReason == ReasonAgentStopped}
			for _, r := range runsOn[n.ID] {
				an.Runs = append(an.Runs, autoscaler.RunRef{ID: r, Preemptions: preempted[r]})
			}
			for _, nr := range n.Runs {
				if nr.Alive && !slices.Contains(runsOn[n.ID], nr.RunID) {
					an.Runs = append(an.Runs, autoscaler.RunRef{ID: nr.RunID})
				}
			}
			ap.Nodes = append(ap.Nodes, an)
		}
		in.Pools = append(in.Pools, ap)
	}
	return in, nil
}
