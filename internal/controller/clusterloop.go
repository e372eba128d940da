package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
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
	pools, err := c.loadPools(ctx)
	if err != nil {
		return err
	}
	if err := c.removeOrphanNodes(ctx, pools); err != nil {
		return err
	}
	if len(pools) == 0 {
		return nil
	}
	now := c.Now()
	c.markSilentNodes(ctx, pools, now)
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

// loadPools reads every cluster target with its size and nodes.
func (c *Controller) loadPools(ctx context.Context) (map[string]*pool, error) {
	targets, err := c.Store.Computes(ctx)
	if err != nil {
		return nil, err
	}
	cat, err := c.Clusters.Sizes(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := c.Store.Nodes(ctx, store.NodeFilter{})
	if err != nil {
		return nil, err
	}
	pools := map[string]*pool{}
	for _, t := range targets {
		if t.Type != compute.TypeCluster {
			continue
		}
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
	for i := range nodes {
		if p := pools[nodes[i].Pool]; p != nil {
			p.nodes = append(p.nodes, nodes[i])
		}
	}
	return pools, nil
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

// removeOrphanNodes deletes the nodes of clusters that no longer exist.
func (c *Controller) removeOrphanNodes(ctx context.Context, pools map[string]*pool) error {
	nodes, err := c.Store.Nodes(ctx, store.NodeFilter{})
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if pools[n.Pool] == nil {
			c.deleteNode(ctx, compute.Spec{Name: n.Pool, Type: compute.TypeCluster}, *n, "its cluster was deleted")
		}
	}
	return nil
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
				JoinedAt: n.JoinedAt, IdleSince: n.IdleSince, Reserved: reserved[n.ID]}
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
