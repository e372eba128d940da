package cluster

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// pool is one cluster target as a pass sees it.
type pool struct {
	spec  compute.Spec
	size  sizes.Size
	nodes []*store.Node
}

// isolated reports whether the pool's runs get nodes of their own: its size is isolated in the
// catalog, or the cluster says so.
func (p *pool) isolated() bool { return p.size.Isolated || p.spec.Cluster.Isolated }

func (p *pool) node(id string) *store.Node {
	for _, n := range p.nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// loadPools reads every cluster target with its size and nodes, and the nodes whose cluster is
// gone. Nodes are read before targets, so a node seen without its target really lost it.
func (b *Backend) loadPools(ctx context.Context) (map[string]*pool, []*store.Node, error) {
	nodes, err := b.Store.Cluster.Nodes(ctx, store.NodeFilter{})
	if err != nil {
		return nil, nil, err
	}
	targets, err := b.Store.Cluster.Computes(ctx)
	if err != nil {
		return nil, nil, err
	}
	cat, err := b.Sizes(ctx)
	if err != nil {
		return nil, nil, err
	}
	clusters := map[string]bool{} // every target with nodes, of this backend's kind or another's
	pools := map[string]*pool{}
	for _, t := range targets {
		if t.Type == compute.TypeCluster || t.Type == compute.TypeInstance {
			clusters[t.Name] = true
		}
		if t.Type != b.kind() {
			continue
		}
		spec, err := b.poolSpec(ctx, t)
		if err != nil || spec.Cluster == nil {
			continue
		}
		size, ok := cat.Lookup(spec.Cluster.Size)
		if !ok {
			b.recordError(ctx, t.Name, fmt.Sprintf("unknown size %s", spec.Cluster.Size))
			continue
		}
		pools[t.Name] = &pool{spec: spec, size: size}
	}
	var orphans []*store.Node
	for _, n := range nodes {
		if p := pools[n.Pool]; p != nil {
			p.nodes = append(p.nodes, n)
		} else if !clusters[n.Pool] && b.kind() == compute.TypeCluster { // one backend deletes orphans
			orphans = append(orphans, n)
		}
	}
	return pools, orphans, nil
}

func sortedPoolNames(pools map[string]*pool) []string {
	names := make([]string, 0, len(pools))
	for n := range pools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// markSilentNodes makes joined nodes whose agent stopped heartbeating unusable (after the backend
// itself has been up long enough to have heard from them).
func (b *Backend) markSilentNodes(ctx context.Context, pools map[string]*pool, now time.Time) {
	after := b.silentAfter()
	if now.Sub(b.started) < after {
		return
	}
	for _, p := range pools {
		for _, n := range p.nodes {
			ready := n.State == compute.NodeIdle || n.State == compute.NodeRunning
			if ready && !n.LastHeartbeat.IsZero() && now.Sub(n.LastHeartbeat) > after {
				why := fmt.Sprintf("no heartbeat for %s", now.Sub(n.LastHeartbeat).Round(time.Second))
				if err := b.Agents.SetState(ctx, n.ID, compute.NodeUnusable, why); err == nil {
					n.State, n.StateReason = compute.NodeUnusable, why
				}
			}
		}
	}
}

// preemptPoll is how often a low-priority cluster's provider is asked for preempted machines.
const preemptPoll = 5 * time.Second

// statusTimeout bounds a provider's answer about preempted machines.
const statusTimeout = 15 * time.Second

// pollPreemptions asks the providers of low-priority clusters which machines the cloud took back
// and marks those nodes preempted; the autoscaler then requeues their runs and deletes them.
func (b *Backend) pollPreemptions(ctx context.Context, pools map[string]*pool, now time.Time) {
	for name, p := range pools {
		if p.spec.Cluster.Tier != compute.TierLowPriority {
			continue
		}
		b.mu.Lock()
		due := now.Sub(b.polled[name]) >= preemptPoll
		if due {
			b.polled[name] = now
		}
		b.mu.Unlock()
		prov, err := b.Provider(p.spec)
		pre, ok := prov.(provider.Preempter)
		if !due || err != nil || !ok {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, statusTimeout)
		ids, err := pre.Preempted(pctx)
		cancel()
		if err != nil {
			b.recordError(ctx, name, err.Error())
			continue
		}
		for _, id := range ids {
			for _, n := range p.nodes {
				if n.ProviderID == id && n.State != compute.NodePreempted && n.State != compute.NodeReleasing {
					_ = b.Agents.SetState(ctx, n.ID, compute.NodePreempted, "the provider reports the machine preempted")
					n.State = compute.NodePreempted
				}
			}
		}
	}
}
