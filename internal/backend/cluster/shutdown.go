package cluster

import (
	"context"
	"errors"
	"sort"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// ReasonServerStopped is the reason of a node deleted because the server stopped as planned.
const ReasonServerStopped = "the server stopped (hangar server stop): its idle agents on this machine stop with it"

// StopIdleLocalNodes is a planned stop's (hangar server stop, SIGTERM; never a crash): it
// deletes the nodes of managed clusters (and of the serverless pool's clusters) whose agents the
// local provider started on this machine and that run nothing, as a scale-down does: their
// agents stop and their rows go, so that nothing the server started idles on after it, and a
// server started later provisions what its clusters need afresh. A node with a run is left: its
// runs go on and report when a server is back (as a local run's supervisor does); so are
// compute instances' nodes (an instance is stopped with hangar compute stop) and nodes of other
// providers (their machines are the owners'). It waits for the deletions until ctx ends and
// returns the nodes it left, sorted.
func (b *Backend) StopIdleLocalNodes(ctx context.Context) (left []string, err error) {
	if err := b.init(ctx, b.now()); err != nil {
		return nil, err
	}
	nodes, err := b.Store.Cluster.Nodes(ctx, store.NodeFilter{})
	if err != nil {
		return nil, err
	}
	busy, err := b.nodesWithRuns(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		spec, local := b.localCluster(ctx, n.Pool)
		switch {
		case !local:
		case busy[n.ID] || len(n.Runs) > 0:
			left = append(left, n.ID)
		default:
			b.deleteNode(ctx, spec, *n, ReasonServerStopped)
		}
	}
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	sort.Strings(left)
	return left, err
}

// localCluster reads a node's pool: its spec, and whether it is a managed cluster whose nodes
// the local provider starts (a compute instance is not).
func (b *Backend) localCluster(ctx context.Context, pool string) (compute.Spec, bool) {
	t, err := b.Store.Cluster.Compute(ctx, pool)
	if err != nil || t.Type != compute.TypeCluster {
		return compute.Spec{}, false
	}
	st, err := compute.Load(*t)
	if err != nil || st.Spec.Cluster == nil {
		return compute.Spec{}, false
	}
	p := st.Spec.Cluster.Provider.Type
	return st.Spec, p == "" || p == compute.ProviderLocal
}

// nodesWithRuns is the set of nodes an active run is placed on.
func (b *Backend) nodesWithRuns(ctx context.Context) (map[string]bool, error) {
	runs, err := b.Store.Runs.List(ctx, store.RunFilter{Active: true})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range runs {
		if r.Placement == nil {
			continue
		}
		for _, id := range r.Placement.Nodes {
			out[id] = true
		}
	}
	return out, nil
}
