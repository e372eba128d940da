package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/store"
)

// applyDecision creates, releases and deletes nodes, records the clusters' state, and returns the
// runs of preempted nodes to requeue (their preemption recorded) or fail.
func (b *Backend) applyDecision(ctx context.Context, dec autoscaler.Decision, pools map[string]*pool, runs []*job.Run) (requeue, fail []backend.RunNote) {
	attempt := map[string]int{}
	for _, r := range runs {
		attempt[r.ID] = max(r.Attempt, 1)
	}
	for _, d := range dec.Pools {
		p := pools[d.Pool]
		b.updateState(ctx, d.Pool, func(st *store.PoolState) {
			st.Failures, st.LastFailure = d.Backoff.Failures, d.Backoff.LastFailure
			st.Target, st.Current, st.Explain = d.Target, len(p.nodes), d.Explain
			if d.Backoff.Failures == 0 {
				st.ProvisionError = "" // a node joined since the last failure
			}
		})
		for i := 0; i < d.Create; i++ {
			b.createNode(ctx, p, explain(d.Explain, "scale up"))
		}
		for _, a := range d.Release {
			if err := b.Agents.Release(ctx, a.Node, a.Reason); err != nil {
				b.log().Error("release node", "node", a.Node, "err", err)
			}
		}
		for _, a := range d.Delete {
			n := p.node(a.Node)
			if n == nil {
				continue
			}
			if a.NotJoined {
				a.Reason = b.notJoined(ctx, p, n, a.Reason)
			}
			b.deleteNode(ctx, p.spec, *n, a.Reason)
		}
		for _, ra := range d.Requeue {
			// Recorded before the requeue: a restarted server still counts it.
			if err := b.Store.Cluster.RecordPreemption(ctx, ra.Run, attempt[ra.Run], ra.Node, b.now()); err != nil {
				b.log().Error("record preemption", "run", ra.Run, "err", err)
				continue
			}
			requeue = append(requeue, backend.RunNote{Run: ra.Run, Reason: ra.Reason})
		}
		for _, ra := range d.Fail {
			fail = append(fail, backend.RunNote{Run: ra.Run, Reason: ra.Reason})
		}
		b.finishReleases(ctx, p)
	}
	return requeue, fail
}

func explain(lines []string, fallback string) string {
	for _, l := range lines {
		if len(l) > 0 {
			return l
		}
	}
	return fallback
}

// createNode records a provisioning node and asks the provider for its machine, in the
// background (a cloud may take minutes); a failure deletes the node and counts for backoff.
func (b *Backend) createNode(ctx context.Context, p *pool, reason string) {
	n, tok, err := b.Agents.CreateNode(ctx, NewNode{Pool: p.spec.Name, Size: p.size,
		LowPriority: p.spec.Cluster.Tier == compute.TierLowPriority, Reason: reason,
		JoinTimeout: time.Duration(p.spec.Cluster.ProvisionTimeout) * time.Second})
	if err != nil {
		b.recordError(ctx, p.spec.Name, "create node: "+err.Error())
		return
	}
	bctx := context.WithoutCancel(ctx)
	prov, err := b.Provider(p.spec)
	if err != nil {
		b.provisionFailed(bctx, p.spec.Name, n.ID, err)
		return
	}
	req := provider.CreateRequest{Pool: p.spec.Name, NodeID: n.ID, Size: p.size, JoinURL: b.JoinURL(), JoinToken: tok,
		JoinCA: string(b.JoinCA)}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		id, err := prov.Create(bctx, req)
		if err != nil {
			b.provisionFailed(bctx, p.spec.Name, n.ID, err)
			return
		}
		b.machineCreated(bctx, p.spec, prov, n.ID, id)
	}()
}

// provisionFailed counts a failure to create a node's machine (the cluster backs off) and
// removes the node; runs waiting for nodes show the failure.
func (b *Backend) provisionFailed(ctx context.Context, pool, node string, err error) {
	now := b.now()
	b.updateState(ctx, pool, func(st *store.PoolState) {
		st.Failures++
		st.LastFailure = now
		st.ProvisionError = err.Error()
	})
	b.recordError(ctx, pool, fmt.Sprintf("provisioning node %s failed: %v", node, err))
	_ = b.Agents.Delete(ctx, node, "provisioning failed: "+err.Error())
}

// deleteNode gives the node's machine back to its provider and removes it.
func (b *Backend) deleteNode(ctx context.Context, spec compute.Spec, n store.Node, reason string) {
	b.mu.Lock()
	if b.deleting[n.ID] {
		b.mu.Unlock()
		return
	}
	b.deleting[n.ID] = true
	b.mu.Unlock()
	done := func() {
		b.mu.Lock()
		delete(b.deleting, n.ID)
		b.mu.Unlock()
	}
	if _, err := b.Store.Cluster.Node(ctx, n.ID); errors.Is(err, store.ErrNotFound) {
		done() // deleted since this pass read the nodes: its machine is gone already
		return
	}
	b.log().Info("deleting node", "node", n.ID, "pool", n.Pool, "reason", reason)
	if err := b.Agents.SetState(ctx, n.ID, compute.NodeReleasing, reason); err != nil {
		b.log().Warn("mark node releasing", "node", n.ID, "err", err)
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer done()
		bctx := context.WithoutCancel(ctx)
		if prov, err := b.Provider(spec); err == nil && n.ProviderID != "" {
			if err := prov.Delete(bctx, provider.DeleteRequest{Pool: n.Pool, NodeID: n.ID, ProviderID: n.ProviderID}); err != nil {
				b.recordError(bctx, n.Pool, fmt.Sprintf("deleting node %s failed: %v", n.ID, err))
				b.Agents.changed() // the waiting runs show it
				return
			}
		}
		if err := b.Agents.Delete(bctx, n.ID, reason); err != nil {
			b.log().Error("delete node", "node", n.ID, "err", err)
		}
	}()
}

// finishReleases deletes releasing nodes whose runs have all ended.
func (b *Backend) finishReleases(ctx context.Context, p *pool) {
	for _, n := range p.nodes {
		if n.State != compute.NodeReleasing {
			continue
		}
		busy := false
		for _, r := range n.Runs {
			busy = busy || r.Alive
		}
		if !busy {
			b.deleteNode(ctx, p.spec, *n, "released: "+n.StateReason)
		}
	}
}
