package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/scheduler"
	"github.com/hangar-ml/hangar/internal/store"
)

// ReasonUserDeleted is the reason a node removed with `hangar compute node delete` carries on
// the timeline, and the runs it requeues.
const ReasonUserDeleted = "deleted by the user"

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
func (c *Controller) machineCreated(ctx context.Context, spec compute.Spec, prov provider.Provider, nodeID, providerID string) {
	now := c.Now()
	_, err := c.Store.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		n.ProviderID = providerID
		if n.State != store.NodeProvisioning {
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
		c.Log.Warn("node gone before its machine was created: deleting the machine", "node", nodeID, "provider_id", providerID)
		if err := prov.Delete(ctx, provider.DeleteRequest{Pool: spec.Name, NodeID: nodeID, ProviderID: providerID}); err != nil {
			c.Clusters.recordError(spec.Name, fmt.Sprintf("deleting the machine of removed node %s failed: %v", nodeID, err), c.Log)
		}
	case err != nil:
		c.Log.Error("record provider id", "node", nodeID, "err", err)
	}
}

// notJoined completes the reason of a node deleted because its agent never joined with what
// its provider can tell (the create hook's output, the agent's log), and makes it the
// cluster's provisioning failure, which the runs waiting for nodes then show.
func (c *Controller) notJoined(ctx context.Context, p *pool, n *store.Node, reason string) string {
	cl := c.Clusters
	switch prov, err := cl.Provider(p.spec); {
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
	cl.mu.Lock()
	st := cl.state[p.spec.Name]
	st.provisionError = failure
	cl.state[p.spec.Name] = st
	cl.mu.Unlock()
	cl.recordError(p.spec.Name, failure, c.Log)
	return reason
}

// provisioningNote is what a run waiting for nodes adds to its reason while its cluster fails
// to bring nodes up: the last failure, until a node joins again.
func (c *Controller) provisioningNote(w scheduler.Wait) string {
	if w.Cause != scheduler.CauseCapacity && w.Cause != scheduler.CauseBehind {
		return ""
	}
	c.Clusters.mu.Lock()
	defer c.Clusters.mu.Unlock()
	if e := c.Clusters.state[w.Pool].provisionError; e != "" {
		return "; provisioning is failing: " + e
	}
	return ""
}

// DeleteNode removes a node at a user's request (`hangar compute node delete`), e.g. one stuck
// provisioning or one whose machine misbehaves. Its runs go back to the queue as a new attempt,
// as after a preemption: the machine went away, not the run's fault, and a user who wants a run
// stopped cancels it. The provider deletes the machine in the background, and the node leaves
// the cluster with ReasonUserDeleted on its timeline. It does not count as a provisioning
// failure, so the cluster provisions a replacement at once if runs wait.
func (c *Controller) DeleteNode(ctx context.Context, id string) (*api.NodeDeletion, error) {
	if c.Clusters == nil {
		return nil, invalidf("clusters are not enabled on this server")
	}
	n, err := c.Store.Node(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundf("node %s does not exist", id)
	}
	if err != nil {
		return nil, err
	}
	spec := compute.Spec{Name: n.Pool, Type: compute.TypeCluster}
	if t, err := c.Store.Compute(ctx, n.Pool); err == nil {
		if st, err := compute.Load(*t); err == nil {
			spec = st.Spec
		}
	}
	runs, err := c.Store.Runs(ctx, store.RunFilter{Active: true, Compute: n.Pool})
	if err != nil {
		return nil, err
	}
	out := &api.NodeDeletion{Node: n.ID, Pool: n.Pool, Reason: ReasonUserDeleted}
	for _, r := range runs {
		var h cluster.Handle
		if len(r.Handle) == 0 || json.Unmarshal(r.Handle, &h) != nil || !slices.Contains(h.Nodes, n.ID) {
			continue
		}
		requeued, err := c.requeueRun(ctx, r.ID, fmt.Sprintf("requeue run %s: node %s %s", r.ID, n.ID, ReasonUserDeleted))
		if err != nil {
			return nil, fmt.Errorf("requeue run %s: %w", r.ID, err)
		}
		if requeued {
			out.Requeued = append(out.Requeued, r.ID)
		}
	}
	c.Clusters.mu.Lock()
	c.Clusters.init()
	c.Clusters.mu.Unlock()
	c.deleteNode(ctx, spec, *n, ReasonUserDeleted)
	c.Kick()
	return out, nil
}

// requeueRun puts an active run back in the queue as a new attempt (the old attempt's log is
// kept as attempt_<n>/) and stops the old attempt on every node it had; false when the run had
// ended already.
func (c *Controller) requeueRun(ctx context.Context, runID, why string) (bool, error) {
	var old int
	var h cluster.Handle
	_, err := c.Store.UpdateRun(ctx, runID, func(r *job.Run) ([]job.Event, error) {
		if r.Status.Terminal() {
			return nil, nil
		}
		if len(r.Handle) > 0 {
			_ = json.Unmarshal(r.Handle, &h) // without a handle there is nothing to stop
		}
		old = max(r.Attempt, 1)
		reason := fmt.Sprintf("%s; attempt %d (the log of attempt %d is kept as attempt_%d/)", why, old+1, old, old)
		ev := job.Event{Time: c.Now(), From: r.Status, To: job.Queued, Reason: reason}
		r.Status, r.StatusReason, r.Handle, r.StartedAt, r.Attempt = job.Queued, reason, nil, nil, old+1
		r.CancelSent = false
		return []job.Event{ev}, nil
	})
	if err != nil || old == 0 {
		return false, err
	}
	if err := c.Store.ArchiveLogs(ctx, runID, fmt.Sprintf("attempt_%d", old)); err != nil {
		c.Log.Error("archive logs", "run", runID, "err", err)
	}
	// The old attempt's supervisors, where their machines still exist, are stopped; their
	// reports are refused as a stale attempt either way.
	for _, n := range h.Nodes {
		_ = c.Clusters.Dispatch.Cancel(ctx, n, runID)
	}
	c.Changed(runID)
	return true, nil
}
