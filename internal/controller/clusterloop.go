package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/agent/dispatch"
	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/scheduler"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// pool is one cluster target as the loop sees it.
type pool struct {
	spec  compute.Spec
	size  sizes.Size
	nodes []*store.Node
}

// reconcileClusters runs one pass for every managed cluster: it builds a snapshot, asks the pure
// scheduler where queued runs go and the pure autoscaler how many nodes each cluster needs, and
// applies both (assignments, waiting reasons, node creation, release and deletion).
func (c *Controller) reconcileClusters(ctx context.Context, active []*job.Run) error {
	cl := c.Clusters
	cl.mu.Lock()
	cl.init()
	cl.mu.Unlock()
	pools, orphans, err := c.loadPools(ctx)
	if err != nil {
		return err
	}
	for _, n := range orphans {
		c.deleteNode(ctx, compute.Spec{Name: n.Pool, Type: compute.TypeCluster}, *n, "its cluster was deleted")
	}
	if len(pools) == 0 {
		return nil
	}
	now := c.Now()
	c.markSilentNodes(ctx, pools, now)
	c.pollPreemptions(ctx, pools, now)
	in, err := c.schedulerInput(ctx, pools, active, now)
	if err != nil {
		return err
	}
	plan := scheduler.Schedule(in)
	c.applyPlan(ctx, plan, pools, active)
	dec := autoscaler.Decide(c.autoscalerInput(pools, plan, active, now))
	c.applyDecision(ctx, dec, pools)
	return nil
}

// loadPools reads every cluster target with its size and nodes, and the nodes whose cluster is
// gone. Nodes are read before targets, so a node seen without its target really lost it.
func (c *Controller) loadPools(ctx context.Context) (map[string]*pool, []*store.Node, error) {
	nodes, err := c.Store.Nodes(ctx, store.NodeFilter{})
	if err != nil {
		return nil, nil, err
	}
	targets, err := c.Store.Computes(ctx)
	if err != nil {
		return nil, nil, err
	}
	cat, err := c.Clusters.Sizes(ctx)
	if err != nil {
		return nil, nil, err
	}
	clusters := map[string]bool{}
	pools := map[string]*pool{}
	for _, t := range targets {
		if t.Type != compute.TypeCluster {
			continue
		}
		clusters[t.Name] = true
		st, err := compute.Load(t)
		if err != nil || st.Spec.Cluster == nil {
			continue
		}
		size, ok := cat.Lookup(st.Spec.Cluster.Size)
		if !ok {
			c.Clusters.recordError(t.Name, fmt.Sprintf("unknown size %s", st.Spec.Cluster.Size), c.Log)
			continue
		}
		pools[t.Name] = &pool{spec: st.Spec, size: size}
	}
	var orphans []*store.Node
	for _, n := range nodes {
		if p := pools[n.Pool]; p != nil {
			p.nodes = append(p.nodes, n)
		} else if !clusters[n.Pool] {
			orphans = append(orphans, n)
		}
	}
	return pools, orphans, nil
}

// markSilentNodes makes joined nodes whose agent stopped heartbeating unusable (after the
// controller itself has been up long enough to have heard from them).
func (c *Controller) markSilentNodes(ctx context.Context, pools map[string]*pool, now time.Time) {
	after := c.Clusters.NodeSilentAfter
	if now.Sub(c.started) < after {
		return
	}
	for _, p := range pools {
		for _, n := range p.nodes {
			ready := n.State == store.NodeIdle || n.State == store.NodeRunning
			if ready && !n.LastHeartbeat.IsZero() && now.Sub(n.LastHeartbeat) > after {
				why := fmt.Sprintf("no heartbeat for %s", now.Sub(n.LastHeartbeat).Round(time.Second))
				if err := c.Clusters.Dispatch.SetState(ctx, n.ID, store.NodeUnusable, why); err == nil {
					n.State, n.StateReason = store.NodeUnusable, why
				}
			}
		}
	}
}

// autoscalerInput describes every pool's nodes, demand and backoff.
func (c *Controller) autoscalerInput(pools map[string]*pool, plan scheduler.Plan, active []*job.Run, now time.Time) autoscaler.Input {
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
	runsOn := runsByNode(active)
	in := autoscaler.Input{Now: now, Policy: c.Clusters.Policy}
	if in.Policy.LostAfter == 0 {
		in.Policy.LostAfter = c.Settings.LostAfter // a silent node is lost when its runs are
	}
	for _, name := range sortedPoolNames(pools) {
		p := pools[name]
		cs := p.spec.Cluster
		ap := autoscaler.Pool{ID: name, Min: cs.MinInstances, Max: cs.MaxInstances,
			IdleTimeBeforeScaleDown: time.Duration(cs.IdleTimeBeforeScaleDown) * time.Second,
			Tier:                    autoscaler.Tier(cs.Tier), Demand: demand[name].Nodes, DemandRuns: demand[name].Runs}
		c.Clusters.mu.Lock()
		ap.Backoff = c.Clusters.backoff[name]
		for _, n := range p.nodes {
			an := autoscaler.Node{ID: n.ID, State: autoscaler.NodeState(n.State), CreatedAt: n.CreatedAt,
				JoinedAt: n.JoinedAt, JoinBy: n.JoinDeadline, IdleSince: n.IdleSince, Reserved: reserved[n.ID],
				LastSeen: n.LastHeartbeat, Gone: n.State == store.NodeUnusable && n.StateReason == dispatch.ReasonAgentStopped}
			for _, r := range runsOn[n.ID] {
				an.Runs = append(an.Runs, autoscaler.RunRef{ID: r, Preemptions: c.Clusters.preemptions[r]})
			}
			for _, nr := range n.Runs {
				if nr.Alive && !slices.Contains(runsOn[n.ID], nr.RunID) {
					an.Runs = append(an.Runs, autoscaler.RunRef{ID: nr.RunID})
				}
			}
			ap.Nodes = append(ap.Nodes, an)
		}
		c.Clusters.mu.Unlock()
		in.Pools = append(in.Pools, ap)
	}
	return in
}

// preemptPoll is how often a low-priority cluster's provider is asked for preempted machines.
const preemptPoll = 5 * time.Second

// pollPreemptions asks the providers of low-priority clusters which machines the cloud took back
// and marks those nodes preempted; the autoscaler then requeues their runs and deletes them.
func (c *Controller) pollPreemptions(ctx context.Context, pools map[string]*pool, now time.Time) {
	cl := c.Clusters
	for name, p := range pools {
		if p.spec.Cluster.Tier != compute.TierLowPriority {
			continue
		}
		cl.mu.Lock()
		due := now.Sub(cl.polled[name]) >= preemptPoll
		if due {
			cl.polled[name] = now
		}
		cl.mu.Unlock()
		prov, err := cl.Provider(p.spec)
		pre, ok := prov.(provider.Preempter)
		if !due || err != nil || !ok {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, statusTimeout)
		ids, err := pre.Preempted(pctx)
		cancel()
		if err != nil {
			cl.recordError(name, err.Error(), c.Log)
			continue
		}
		for _, id := range ids {
			for _, n := range p.nodes {
				if n.ProviderID == id && n.State != store.NodePreempted && n.State != store.NodeReleasing {
					_ = cl.Dispatch.SetState(ctx, n.ID, store.NodePreempted, "the provider reports the machine preempted")
					n.State = store.NodePreempted
				}
			}
		}
	}
}
