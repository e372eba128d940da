package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/agent/dispatch"
	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/scheduler"
	"github.com/hangar-ml/hangar/internal/store"
)

// applyPlan hands placed runs to their nodes' agents and records why the others wait.
func (c *Controller) applyPlan(ctx context.Context, plan scheduler.Plan, pools map[string]*pool, active []*job.Run) {
	byID := map[string]*job.Run{}
	for _, r := range active {
		byID[r.ID] = r
	}
	held := heldGPUs(active)
	for _, p := range plan.Placements {
		if err := c.place(ctx, p, held); err != nil {
			c.Log.Error("place run", "run", p.Run, "err", err)
		}
	}
	for _, w := range plan.Waiting {
		r := byID[w.Run]
		if r == nil {
			continue
		}
		if w.Unschedulable && !strings.Contains(w.Reason, "quota") {
			_, _ = c.transition(ctx, r.ID, job.Failed, "unschedulable: "+w.Reason, nil, nil)
			continue
		}
		if w.Unschedulable { // a quota can be raised: the run waits for it
			w.Reason = "waiting for quota: " + w.Reason + " (hangar settings set quota.family.<family> <cores>)"
		}
		w.Reason += c.provisioningNote(w)
		if r.StatusReason != w.Reason {
			_, _ = c.Store.UpdateRun(ctx, r.ID, func(r *job.Run) ([]job.Event, error) {
				r.StatusReason = w.Reason
				return nil, nil
			})
		}
	}
}

// place records a run's nodes (in rank order) in its handle and assigns the run to each node's
// agent, which starts a supervisor for its share of the ranks.
func (c *Controller) place(ctx context.Context, p scheduler.Placement, held map[string]map[string]bool) error {
	gpus, err := c.pickGPUs(ctx, p, held)
	if err != nil {
		return err
	}
	h, err := json.Marshal(cluster.Handle{Run: p.Run, Pool: p.Pool, Nodes: p.Nodes, GPUs: gpus})
	if err != nil {
		return err
	}
	placed := false
	_, err = c.Store.UpdateRun(ctx, p.Run, func(r *job.Run) ([]job.Event, error) {
		if r.Status != job.Queued || len(r.Handle) > 0 {
			return nil, nil
		}
		placed = true
		r.Handle, r.LastHeartbeat = h, c.Now()
		r.StatusReason = fmt.Sprintf("assigned to nodes %s", strings.Join(p.Nodes, ", "))
		return nil, nil
	})
	if err != nil || !placed {
		return err
	}
	c.Log.Info("placed", "run", p.Run, "pool", p.Pool, "nodes", p.Nodes)
	c.Changed(p.Run)
	// Every node of the run starts a supervisor; node 0's leads (see supervisor worker mode).
	for _, n := range p.Nodes {
		if err := c.Clusters.Dispatch.Assign(ctx, n, p.Run); err != nil {
			return err
		}
	}
	return nil
}

// applyDecision creates, releases and deletes nodes and requeues or fails preempted runs.
func (c *Controller) applyDecision(ctx context.Context, dec autoscaler.Decision, pools map[string]*pool) {
	cl := c.Clusters
	for _, d := range dec.Pools {
		p := pools[d.Pool]
		cl.mu.Lock()
		cl.backoff[d.Pool] = d.Backoff
		st := cl.state[d.Pool]
		st.Target, st.Current, st.Explain, st.At = d.Target, len(p.nodes), d.Explain, c.Now()
		if d.Backoff.Failures == 0 {
			st.provisionError = "" // a node joined since the last failure
		}
		cl.state[d.Pool] = st
		cl.mu.Unlock()
		for i := 0; i < d.Create; i++ {
			c.createNode(ctx, p, explain(d.Explain, "scale up"))
		}
		for _, a := range d.Release {
			if err := cl.Dispatch.Release(ctx, a.Node, a.Reason); err != nil {
				c.Log.Error("release node", "node", a.Node, "err", err)
			}
		}
		for _, a := range d.Delete {
			n := findNode(p, a.Node)
			if n == nil {
				continue
			}
			if a.NotJoined {
				a.Reason = c.notJoined(ctx, p, n, a.Reason)
			}
			c.deleteNode(ctx, p.spec, *n, a.Reason)
		}
		for _, ra := range d.Requeue {
			c.requeue(ctx, ra)
		}
		for _, ra := range d.Fail {
			_, _ = c.transition(ctx, ra.Run, job.Failed, ra.Reason, nil, nil)
		}
		c.finishReleases(ctx, p)
	}
}

// createNode records a provisioning node and asks the provider for its machine, in the
// background (a cloud may take minutes); a failure deletes the node and counts for backoff.
func (c *Controller) createNode(ctx context.Context, p *pool, reason string) {
	cl := c.Clusters
	n, tok, err := cl.Dispatch.CreateNode(ctx, dispatch.NewNode{Pool: p.spec.Name, Size: p.size,
		LowPriority: p.spec.Cluster.Tier == compute.TierLowPriority, Reason: reason,
		JoinTimeout: time.Duration(p.spec.Cluster.ProvisionTimeout) * time.Second})
	if err != nil {
		cl.recordError(p.spec.Name, "create node: "+err.Error(), c.Log)
		return
	}
	prov, err := cl.Provider(p.spec)
	if err != nil {
		c.provisionFailed(context.WithoutCancel(ctx), p.spec.Name, n.ID, err)
		return
	}
	req := provider.CreateRequest{Pool: p.spec.Name, NodeID: n.ID, Size: p.size, JoinURL: cl.JoinURL(), JoinToken: tok}
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		bctx := context.WithoutCancel(ctx)
		id, err := prov.Create(bctx, req)
		if err != nil {
			c.provisionFailed(bctx, p.spec.Name, n.ID, err)
			return
		}
		c.machineCreated(bctx, p.spec, prov, n.ID, id)
	}()
}

func (c *Controller) provisionFailed(ctx context.Context, pool, node string, err error) {
	cl := c.Clusters
	cl.mu.Lock()
	b := cl.backoff[pool]
	b.Failures++
	b.LastFailure = c.Now()
	cl.backoff[pool] = b
	st := cl.state[pool]
	st.provisionError = err.Error()
	cl.state[pool] = st
	cl.mu.Unlock()
	cl.recordError(pool, fmt.Sprintf("provisioning node %s failed: %v", node, err), c.Log)
	_ = cl.Dispatch.Delete(ctx, node, "provisioning failed: "+err.Error())
}

// deleteNode gives the node's machine back to its provider and removes it.
func (c *Controller) deleteNode(ctx context.Context, spec compute.Spec, n store.Node, reason string) {
	cl := c.Clusters
	cl.mu.Lock()
	if cl.deleting[n.ID] {
		cl.mu.Unlock()
		return
	}
	cl.deleting[n.ID] = true
	cl.mu.Unlock()
	if _, err := c.Store.Node(ctx, n.ID); errors.Is(err, store.ErrNotFound) {
		// Deleted since this pass read the nodes: its machine is gone already.
		cl.mu.Lock()
		delete(cl.deleting, n.ID)
		cl.mu.Unlock()
		return
	}
	c.Log.Info("deleting node", "node", n.ID, "pool", n.Pool, "reason", reason)
	if err := cl.Dispatch.SetState(ctx, n.ID, store.NodeReleasing, reason); err != nil {
		c.Log.Warn("mark node releasing", "node", n.ID, "err", err)
	}
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		defer func() {
			cl.mu.Lock()
			delete(cl.deleting, n.ID)
			cl.mu.Unlock()
		}()
		bctx := context.WithoutCancel(ctx)
		if prov, err := cl.Provider(spec); err == nil && n.ProviderID != "" {
			if err := prov.Delete(bctx, provider.DeleteRequest{Pool: n.Pool, NodeID: n.ID, ProviderID: n.ProviderID}); err != nil {
				cl.recordError(n.Pool, fmt.Sprintf("deleting node %s failed: %v", n.ID, err), c.Log)
				return
			}
		}
		if err := cl.Dispatch.Delete(bctx, n.ID, reason); err != nil {
			c.Log.Error("delete node", "node", n.ID, "err", err)
		}
	}()
}

// finishReleases deletes releasing nodes whose runs have all ended.
func (c *Controller) finishReleases(ctx context.Context, p *pool) {
	for _, n := range p.nodes {
		if n.State != store.NodeReleasing {
			continue
		}
		busy := false
		for _, r := range n.Runs {
			busy = busy || r.Alive
		}
		if !busy {
			c.deleteNode(ctx, p.spec, *n, "released: "+n.StateReason)
		}
	}
}

// requeue puts a run whose node was preempted back in the queue.
func (c *Controller) requeue(ctx context.Context, ra autoscaler.RunAction) {
	c.Clusters.mu.Lock()
	c.Clusters.preemptions[ra.Run] = ra.Preemptions
	c.Clusters.mu.Unlock()
	if _, err := c.requeueRun(ctx, ra.Run, ra.Reason); err != nil {
		c.Log.Error("requeue", "run", ra.Run, "err", err)
	}
}

func findNode(p *pool, id string) *store.Node {
	for _, n := range p.nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

func explain(lines []string, fallback string) string {
	for _, l := range lines {
		if len(l) > 0 {
			return l
		}
	}
	return fallback
}

// heldGPUs maps node → GPU index → held, from the placed runs' handles.
func heldGPUs(active []*job.Run) map[string]map[string]bool {
	held := map[string]map[string]bool{}
	for _, r := range active {
		var h cluster.Handle
		if len(r.Handle) == 0 || json.Unmarshal(r.Handle, &h) != nil {
			continue
		}
		for n, gs := range h.GPUs {
			if held[n] == nil {
				held[n] = map[string]bool{}
			}
			for _, g := range gs {
				held[n][g] = true
			}
		}
	}
	return held
}

// pickGPUs chooses, on each of the placement's nodes, GPUs no other run holds (the scheduler
// made sure there are enough), and marks them held.
func (c *Controller) pickGPUs(ctx context.Context, p scheduler.Placement, held map[string]map[string]bool) (map[string][]string, error) {
	want := int(p.PerNode.GPU)
	if want <= 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, id := range p.Nodes {
		n, err := c.Store.Node(ctx, id)
		if err != nil {
			return nil, err
		}
		if held[id] == nil {
			held[id] = map[string]bool{}
		}
		for _, g := range n.GPUs {
			idx := strconv.Itoa(g.Index)
			if len(out[id]) < want && !held[id][idx] {
				out[id] = append(out[id], idx)
				held[id][idx] = true
			}
		}
		if len(out[id]) < want {
			return nil, fmt.Errorf("node %s has %d free GPUs, the run needs %d", id, len(out[id]), want)
		}
	}
	return out, nil
}
