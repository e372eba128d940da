package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/store"
)

// ReasonUserDeleted is the reason a node removed with `hangar compute node delete` carries on
// the timeline, and the runs it requeues.
const ReasonUserDeleted = "deleted by the user"

// ErrNoNode is DeleteNode's error for a node that does not exist.
var ErrNoNode = errors.New("does not exist")

// joinTimeout is how long a cluster's node may take to join once its machine was created.
func joinTimeout(cs *compute.ClusterSpec) time.Duration {
	if cs != nil && cs.JoinTimeout > 0 {
		return time.Duration(cs.JoinTimeout) * time.Second
	}
	return compute.DefaultJoinTimeout * time.Second
}

// machineCreated records the provider's id of a node's machine and, while the node has not
// joined, brings its join deadline forward to join_timeout from now: the provider's work is
// done, so an agent that does not join soon never will, and the user hears it in minutes, not
// at provision_timeout. A node deleted meanwhile (by hand, or past provision_timeout) has its
// new machine deleted at once, so that none is left behind unseen.
func (b *Backend) machineCreated(ctx context.Context, spec compute.Spec, prov provider.Provider, nodeID, providerID string) {
	now := b.now()
	_, err := b.Store.Cluster.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		n.ProviderID = providerID
		if n.State != compute.NodeProvisioning {
			return nil, nil // it joined while the hook was still running
		}
		if by := now.Add(joinTimeout(spec.Cluster)); n.JoinDeadline.IsZero() || by.Before(n.JoinDeadline) {
			n.JoinDeadline = by
		}
		why := fmt.Sprintf("machine %s created; waiting up to %s for its agent to join", providerID, n.JoinDeadline.Sub(now).Round(time.Second))
		n.StateReason = why
		return []store.NodeEvent{{Time: now, From: n.State, To: n.State, Reason: why}}, nil
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		b.log().Warn("node gone before its machine was created: deleting the machine", "node", nodeID, "provider_id", providerID)
		if err := prov.Delete(ctx, provider.DeleteRequest{Pool: spec.Name, NodeID: nodeID, ProviderID: providerID}); err != nil {
			b.recordError(ctx, spec.Name, fmt.Sprintf("deleting the machine of removed node %s failed: %v", nodeID, err))
		}
	case err != nil:
		b.log().Error("record provider id", "node", nodeID, "err", err)
	}
}

// notJoined completes the reason of a node deleted because its agent never joined with what
// its provider can tell (the create hook's output, the agent's log), and makes it the
// cluster's provisioning failure, which the runs waiting for nodes then show.
func (b *Backend) notJoined(ctx context.Context, p *pool, n *store.Node, reason string) string {
	switch prov, err := b.Provider(p.spec); {
	case n.ProviderID == "":
		reason += ": the provider was still creating its machine"
	case err == nil:
		if ex, ok := prov.(provider.Explainer); ok {
			if why := ex.Explain(ctx, provider.DeleteRequest{Pool: n.Pool, NodeID: n.ID, ProviderID: n.ProviderID}); why != "" {
				reason += ": " + why
			}
		}
	}
	failure := strings.TrimPrefix(reason, "delete ")
	b.updateState(ctx, p.spec.Name, func(st *store.PoolState) { st.ProvisionError = failure })
	b.recordError(ctx, p.spec.Name, failure)
	return reason
}

// providerSpec is a node's target as Provider reads it (from its Cluster part): a compute
// instance keeps its provider in its Instance part, which would otherwise read as the local
// provider and leave a command provider's machine running.
func providerSpec(s compute.Spec) compute.Spec {
	if s.Cluster == nil && s.Instance != nil {
		s.Cluster = &compute.ClusterSpec{Size: s.Instance.Size, Provider: s.Instance.Provider}
	}
	return s
}

// DeleteNode removes a node at a user's request (`hangar compute node delete`), e.g. one stuck
// provisioning or one whose machine misbehaves. Its runs go back to the queue as a new attempt
// (Requeue), as after a preemption: the machine went away, not the run's fault, and a user who
// wants a run stopped cancels it. Then the provider deletes the machine in the background, and
// the node leaves the cluster with ReasonUserDeleted on its timeline. It does not count as a
// provisioning failure, so the cluster provisions a replacement at once if runs wait.
func (b *Backend) DeleteNode(ctx context.Context, id string) (*api.NodeDeletion, error) {
	if err := b.init(ctx, b.now()); err != nil {
		return nil, err
	}
	n, err := b.Store.Cluster.Node(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("node %s %w", id, ErrNoNode)
	}
	if err != nil {
		return nil, err
	}
	spec := compute.Spec{Name: n.Pool, Type: compute.TypeCluster}
	if t, err := b.Store.Cluster.Compute(ctx, n.Pool); err == nil {
		if st, err := compute.Load(*t); err == nil {
			spec = providerSpec(st.Spec)
		}
	}
	runs, err := b.Store.Runs.List(ctx, store.RunFilter{Active: true, Compute: n.Pool})
	if err != nil {
		return nil, err
	}
	out := &api.NodeDeletion{Node: n.ID, Pool: n.Pool, Reason: ReasonUserDeleted}
	for _, r := range runs {
		if r.Placement.Rank(n.ID) < 0 {
			continue
		}
		requeued, err := b.Requeuer.Requeue(ctx, r.ID, fmt.Sprintf("requeue run %s: node %s %s", r.ID, n.ID, ReasonUserDeleted))
		if err != nil {
			return nil, fmt.Errorf("requeue run %s: %w", r.ID, err)
		}
		if requeued {
			out.Requeued = append(out.Requeued, r.ID)
		}
	}
	b.deleteNode(ctx, spec, *n, ReasonUserDeleted)
	b.Agents.changed() // a replacement may be provisioned at once
	return out, nil
}
