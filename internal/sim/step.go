package sim

import (
	"slices"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/scheduler"
)

// schedInput is the snapshot the scheduler sees.
func (w *world) schedInput() scheduler.Input {
	in := scheduler.Input{Now: w.now, Quotas: w.cfg.Quotas, DefaultUserLimit: w.cfg.UserLimit}
	for _, p := range w.pools {
		in.Pools = append(in.Pools, scheduler.Pool{ID: p.ID, MaxNodes: p.Max, Size: p.Size})
		for _, n := range p.nodes {
			in.Nodes = append(in.Nodes, scheduler.Node{ID: n.id, Pool: p.ID, State: n.state, Capacity: p.Size, Allocated: n.alloc})
		}
	}
	for _, r := range w.queue {
		j := r.job
		in.Queue = append(in.Queue, scheduler.Run{ID: j.ID, Pool: j.Pool, User: j.User, Priority: j.Priority,
			SubmitTime: r.submit, InstanceCount: j.Instances, PerNode: j.PerNode, Family: w.byPool[j.Pool].Family})
	}
	for _, r := range w.running {
		if r.interrupted() {
			continue
		}
		ids := make([]string, len(r.nodes))
		for i, n := range r.nodes {
			ids[i] = n.id
		}
		in.Running = append(in.Running, scheduler.Running{ID: r.job.ID, User: r.job.User,
			Family: w.byPool[r.job.Pool].Family, Nodes: ids, PerNode: r.job.PerNode})
	}
	return in
}

// applyPlan starts the placed runs, fails the unschedulable ones and marks reserved nodes.
func (w *world) applyPlan(plan scheduler.Plan) {
	nodes := w.nodeIndex()
	for _, pl := range plan.Placements {
		r := w.runs[pl.Run]
		for _, id := range pl.Nodes {
			n := nodes[id]
			n.alloc = n.alloc.Add(pl.PerNode)
			n.runs = append(n.runs, r)
			n.state = compute.NodeRunning
			r.nodes = append(r.nodes, n)
		}
		if r.firstStart.IsZero() {
			r.firstStart = w.now
		}
		r.started, r.end = w.now, w.now.Add(r.job.Duration-r.saved)
		w.running = append(w.running, r)
	}
	for _, wt := range plan.Waiting {
		if wt.Unschedulable {
			w.runs[wt.Run].failed = true
		}
	}
	w.queue = slices.DeleteFunc(w.queue, func(r *run) bool { return r.failed || len(r.nodes) > 0 })
	for _, n := range nodes {
		n.reserved = false
	}
	for _, res := range plan.Reservations {
		for _, id := range res.Nodes {
			nodes[id].reserved = true
		}
	}
}

func (w *world) nodeIndex() map[string]*node {
	out := map[string]*node{}
	for _, p := range w.pools {
		for _, n := range p.nodes {
			out[n.id] = n
		}
	}
	return out
}

// scaleInput is what the autoscaler sees, rewritten by the policy.
func (w *world) scaleInput(plan scheduler.Plan, pol Policy) autoscaler.Input {
	in := autoscaler.Input{Now: w.now, Policy: w.cfg.Autoscaler}
	waiting := map[string]int{}
	for _, wt := range plan.Waiting {
		if wt.Cause == scheduler.CauseCapacity || wt.Cause == scheduler.CauseBehind {
			waiting[wt.Pool]++
		}
	}
	for i, p := range w.pools {
		ap := autoscaler.Pool{ID: p.ID, Min: p.Min, Max: p.Max, IdleTimeBeforeScaleDown: p.Idle, Tier: p.Tier,
			Demand: plan.Demand[i].Nodes, DemandRuns: plan.Demand[i].Runs, Backoff: p.backoff}
		for _, n := range p.nodes {
			an := autoscaler.Node{ID: n.id, State: n.state, CreatedAt: n.created,
				JoinedAt: n.joined, Reserved: n.reserved}
			for _, r := range n.runs {
				an.Runs = append(an.Runs, autoscaler.RunRef{ID: r.job.ID, Preemptions: r.preemptions})
			}
			if len(n.runs) == 0 {
				an.IdleSince = n.idleSince
			}
			ap.Nodes = append(ap.Nodes, an)
		}
		if pol.Adjust != nil {
			pol.Adjust(&ap, waiting[p.ID])
		}
		in.Pools = append(in.Pools, ap)
	}
	return in
}

// applyDecision carries out the autoscaler's decision on the simulated provider.
func (w *world) applyDecision(d autoscaler.Decision) {
	nodes := w.nodeIndex()
	for i, pd := range d.Pools {
		p := w.pools[i]
		for _, a := range pd.Requeue {
			r := w.runs[a.Run]
			w.stop(r)
			w.lose(r)
			r.preemptions = a.Preemptions
			w.queue = append(w.queue, r)
			w.st.requeue++
		}
		for _, a := range pd.Fail {
			r := w.runs[a.Run]
			w.stop(r)
			r.failed = true
		}
		gone := map[string]bool{}
		for _, a := range pd.Delete {
			gone[a.Node] = true
		}
		p.nodes = slices.DeleteFunc(p.nodes, func(n *node) bool { return gone[n.id] })
		for _, a := range pd.Release {
			n := nodes[a.Node]
			n.state, n.goneAt = compute.NodeReleasing, w.now.Add(w.cfg.ReleaseTime)
		}
		for range pd.Create {
			w.create(p)
		}
		if pd.Create > 0 {
			w.st.scaleUps++
			w.st.created += pd.Create
		}
		p.backoff = pd.Backoff
	}
}

// stop takes an interrupted run off its nodes and out of the running list.
func (w *world) stop(r *run) {
	w.free(r)
	w.running = slices.DeleteFunc(w.running, func(x *run) bool { return x == r })
}
