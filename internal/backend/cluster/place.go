package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/scheduler"
)

// Place is one pass over every managed cluster (backend.Placer): it snapshots the clusters and
// the runs given, asks the pure scheduler where queued runs go and the pure autoscaler how many
// nodes each cluster needs, applies the scaling (nodes created, released and deleted through
// their providers, in the background) and returns the runs to start with their nodes and GPUs,
// why the others wait, and the runs to requeue or fail. A run placed by an earlier pass and not
// yet started (its server stopped in between) is placed again where it was.
func (b *Backend) Place(ctx context.Context, in backend.PlaceInput) (backend.Plan, error) {
	if err := b.init(ctx, in.Now); err != nil {
		return backend.Plan{}, err
	}
	pools, orphans, err := b.loadPools(ctx)
	if err != nil {
		return backend.Plan{}, err
	}
	for _, n := range orphans {
		b.deleteNode(ctx, compute.Spec{Name: n.Pool, Type: compute.TypeCluster}, *n, "its cluster was deleted")
	}
	if len(pools) == 0 {
		return backend.Plan{}, nil
	}
	b.markSilentNodes(ctx, pools, in.Now)
	b.pollPreemptions(ctx, pools, in.Now)
	sin, err := b.schedulerInput(ctx, pools, in.Runs, in.Now)
	if err != nil {
		return backend.Plan{}, err
	}
	sched := scheduler.Schedule(sin)
	plan := b.planRuns(sched, pools, in.Runs)
	ain, err := b.autoscalerInput(ctx, pools, sched, plan.Placed, in.Runs, in.Now)
	if err != nil {
		return backend.Plan{}, err
	}
	requeue, fail := b.applyDecision(ctx, autoscaler.Decide(ain), pools, in.Runs)
	plan.Requeue = append(plan.Requeue, requeue...)
	plan.Fail = append(plan.Fail, fail...)
	plan.Wake = wake(plan, in.Now, b.recheck())
	return plan, nil
}

// wake is when a plan asks to be called again without news: at the next pass when it moved
// runs (to see them started, and what they freed), else after recheck.
func wake(plan backend.Plan, now time.Time, recheck time.Duration) time.Time {
	if len(plan.Placed)+len(plan.Requeue)+len(plan.Fail) > 0 {
		return time.Time{}
	}
	return now.Add(recheck)
}

// planRuns turns the scheduler's plan into the runs to start (with GPUs picked on each node),
// the reasons of those that wait and the runs that never can; runs placed before and not started
// are started where they were, or requeued when a node of theirs went away.
func (b *Backend) planRuns(sched scheduler.Plan, pools map[string]*pool, runs []*job.Run) backend.Plan {
	var plan backend.Plan
	held := heldGPUs(runs)
	for _, r := range runs {
		if r.Placement == nil || len(r.Handle) > 0 || pools[r.Compute] == nil {
			continue
		}
		if gone := missingNode(pools[r.Compute], r.Placement.Nodes); gone != "" {
			plan.Requeue = append(plan.Requeue, backend.RunNote{Run: r.ID,
				Reason: fmt.Sprintf("requeue run %s: its node %s went away before the run started", r.ID, gone)})
			continue
		}
		plan.Placed = append(plan.Placed, backend.Placed{Run: r.ID, Placement: *r.Placement})
	}
	for _, p := range sched.Placements {
		gpus, err := pickGPUs(pools[p.Pool], p, held)
		if err != nil {
			plan.Waiting = append(plan.Waiting, backend.RunNote{Run: p.Run, Reason: "waiting for GPUs: " + err.Error()})
			continue
		}
		plan.Placed = append(plan.Placed, backend.Placed{Run: p.Run, Placement: job.Placement{Nodes: p.Nodes, GPUs: gpus}})
	}
	for _, w := range sched.Waiting {
		if why, ok := groupReason(w, pools[w.Pool], runs); ok { // a quota: the run waits for it
			plan.Waiting = append(plan.Waiting, backend.RunNote{Run: w.Run, Reason: why})
			continue
		}
		if w.Unschedulable && !strings.Contains(w.Reason, "quota") {
			plan.Fail = append(plan.Fail, backend.RunNote{Run: w.Run, Reason: "unschedulable: " + w.Reason})
			continue
		}
		if w.Unschedulable { // a quota can be raised: the run waits for it
			w.Reason = "waiting for quota: " + w.Reason + " (hangar settings set quota.family.<family> <cores>)"
		}
		plan.Waiting = append(plan.Waiting, backend.RunNote{Run: w.Run, Reason: w.Reason + b.provisioningNote(w)})
	}
	return plan
}

// missingNode is the first of a placement's nodes that is gone or can no longer start it.
func missingNode(p *pool, nodes []string) string {
	for _, id := range nodes {
		if n := p.node(id); n == nil || n.State == compute.NodeReleasing || n.State == compute.NodePreempted {
			return id
		}
	}
	return ""
}

// provisioningNote is what a run waiting for nodes adds to its reason while its cluster fails
// to bring nodes up: the last failure, until a node joins again.
func (b *Backend) provisioningNote(w scheduler.Wait) string {
	if w.Cause != scheduler.CauseCapacity && w.Cause != scheduler.CauseBehind {
		return ""
	}
	if e := b.poolState(w.Pool).ProvisionError; e != "" {
		return "; provisioning is failing: " + e
	}
	return ""
}
