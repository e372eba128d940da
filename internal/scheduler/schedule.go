package scheduler

import (
	"cmp"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

// Schedule decides which queued runs start now and on which nodes, and why every other
// run waits. It is a pure function of its input: same input, same plan, whatever the
// order of the input's lists.
//
// Runs are taken by priority (high first), then submit time, then ID. A run starts only
// if all of its InstanceCount nodes can be had at once (gang), each ready (idle or
// running) with PerNode free, and only within its user's run limit and its family's core
// quota. Backfill: the first run of a pool that waits for nodes reserves the nodes it
// will get soonest (see block) and holds its quota cost, and later runs may use only
// what is left; the first run that waits for quota holds its family's quota, and later
// runs of that family wait behind it. A later run thus starts only if it cannot delay them.
//
// Cost: O(R log R + N log N + R·B) for R queued runs, N nodes and B distinct (free
// capacity, labels) buckets per pool; requests that already failed in a pass are
// rejected in O(1), since free capacity only shrinks during a pass.
func Schedule(in Input) Plan {
	s := newState(&in)
	for _, r := range s.queue {
		s.consider(r)
	}
	s.planDemand()
	return s.finish(in)
}

// state is one scheduling pass's working copy of the input.
type state struct {
	nodes       nodeTable
	pools       map[string]*poolState
	sortedPools []*poolState
	queue       []*Run
	blocked     []*Run // runs waiting for nodes, in queue order

	quotas      map[string]int64
	used        map[string]int64 // family → millicores of running and placed runs
	held        map[string]int64 // family → millicores held for runs waiting for nodes
	quotaHolder map[string]*Run  // family → first run waiting for its quota
	userRuns    map[string]int
	in          *Input

	placements []Placement
	waiting    []Wait
	demand     []PoolDemand
}

// poolState is one pool's part of a pass.
type poolState struct {
	Pool
	idx          *poolIndex
	total        int   // listed nodes, counted against MaxNodes
	provisioning []int // node indices of provisioning nodes (not in idx until the demand pass)
	head         *Run  // the first run that waits for nodes
	reserved     []int // node indices held for head
}

func newState(in *Input) *state {
	s := &state{
		pools: map[string]*poolState{}, quotas: in.Quotas, in: in,
		used: map[string]int64{}, held: map[string]int64{},
		quotaHolder: map[string]*Run{}, userRuns: map[string]int{},
	}
	for _, p := range in.Pools {
		ps := &poolState{Pool: p, idx: newPoolIndex(&s.nodes)}
		s.pools[p.ID] = ps
		s.sortedPools = append(s.sortedPools, ps)
	}
	slices.SortFunc(s.sortedPools, func(a, b *poolState) int { return strings.Compare(a.ID, b.ID) })
	holds := map[string]holding{}
	for _, r := range in.Running {
		s.used[r.Family] += quotaCost(r.QuotaCPU, len(r.Nodes), r.PerNode)
		s.userRuns[r.User]++
		for _, id := range r.Nodes {
			h := holds[id]
			h.busy, h.isolated = true, h.isolated || r.Isolated
			holds[id] = h
		}
	}
	nodes := slices.Clone(in.Nodes)
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
	for _, n := range nodes {
		s.addNode(n, holds[n.ID])
	}
	s.queue = make([]*Run, len(in.Queue))
	for i := range in.Queue {
		s.queue[i] = &in.Queue[i]
	}
	slices.SortFunc(s.queue, queueOrder)
	return s
}

// holding is what running runs do to a node: hold it (busy), or hold it alone (isolated).
type holding struct{ busy, isolated bool }

// addNode files a node of a known pool: ready nodes into the pool's index, provisioning
// ones aside for the demand pass; others, and nodes an isolated run holds, only count
// against MaxNodes.
func (s *state) addNode(n Node, h holding) {
	ps := s.pools[n.Pool]
	if ps == nil {
		return
	}
	ps.total++
	switch {
	case n.State.Ready() && h.isolated:
		// closed to other work until its run ends
	case n.State.Ready():
		i := s.nodes.add(n.ID, n.Capacity, n.Capacity.Sub(n.Allocated), n.Labels, labelKey(n.Labels))
		s.nodes.busy[i] = h.busy || !n.Allocated.IsZero()
		ps.idx.insert(i)
	case n.State == compute.NodeProvisioning:
		capacity, labels := n.Capacity, n.Labels
		if capacity.IsZero() {
			capacity = ps.Size
		}
		if labels == nil {
			labels = ps.Labels
		}
		ps.provisioning = append(ps.provisioning, s.nodes.add(n.ID, capacity, capacity, labels, labelKey(labels)))
	}
}

// queueOrder sorts by priority (high first), submit time, then ID.
func queueOrder(a, b *Run) int {
	if a.Priority != b.Priority {
		return cmp.Compare(b.Priority, a.Priority)
	}
	if c := a.SubmitTime.Compare(b.SubmitTime); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// instances is the run's gang size.
func instances(r *Run) int { return max(1, r.InstanceCount) }

// quotaCost is what a run counts against its family's quota: its own figure, or its cores.
func quotaCost(quotaCPU int64, n int, perNode resources.Vector) int64 {
	if quotaCPU > 0 {
		return quotaCPU
	}
	return int64(n) * perNode.MilliCPU
}

// userLimit is the most runs user may have running; 0 means unlimited.
func (s *state) userLimit(user string) int {
	if l, ok := s.in.UserLimits[user]; ok {
		return l
	}
	return s.in.DefaultUserLimit
}

// consider places one run or records why it waits.
func (s *state) consider(r *Run) {
	ps := s.pools[r.Pool]
	if ps == nil {
		s.wait(r, CauseImpossible, "unknown cluster "+r.Pool)
		return
	}
	n, cost := instances(r), quotaCost(r.QuotaCPU, instances(r), r.PerNode)
	quota, limited := s.quotas[r.Family]
	if why := impossible(ps, r, n, cost, quota, limited); why != "" {
		s.wait(r, CauseImpossible, why)
		return
	}
	if l := s.userLimit(r.User); l > 0 && s.userRuns[r.User] >= l {
		s.wait(r, CauseUserLimit, userReason(r.User, s.userRuns[r.User], l))
		return
	}
	if limited && cost > 0 {
		if h := s.quotaHolder[r.Family]; h != nil {
			s.wait(r, CauseBehind, behindReason(r, h)+" for family "+r.Family+" quota")
			return
		}
		if s.used[r.Family]+s.held[r.Family]+cost > quota {
			s.quotaHolder[r.Family] = r
			s.wait(r, CauseQuota, s.quotaReason(r, cost, quota))
			return
		}
	}
	idx, ok := ps.idx.take(r.PerNode, n, r.NodeSelector, labelKey(r.NodeSelector), r.Isolated)
	if !ok {
		s.block(ps, r, cost, limited)
		return
	}
	s.used[r.Family] += cost
	s.userRuns[r.User]++
	s.placements = append(s.placements, Placement{Run: r.ID, Pool: ps.ID, Nodes: s.names(idx), PerNode: r.PerNode})
}

// block records a run that waits for nodes. The pool's first such run (its head) reserves
// the nodes it will get soonest, so that no later run delays it:
//   - every ready node that fits it now (fewer than it needs, or it would have started);
//   - provisioning nodes that will fit it are counted, not reserved (nothing can take them yet);
//   - if that is still too few and the pool cannot grow by the rest (MaxNodes, or the size
//     or labels do not suit), the busy nodes whose capacity fits it, most free first.
//
// The head also holds its quota cost. Later runs of the pool may use unreserved nodes only.
func (s *state) block(ps *poolState, r *Run, cost int64, limited bool) {
	s.blocked = append(s.blocked, r)
	if ps.head != nil {
		s.wait(r, CauseBehind, behindReason(r, ps.head))
		return
	}
	ps.head = r
	if limited {
		s.held[r.Family] += cost
	}
	n := instances(r)
	free := ps.idx.takeFitting(r.PerNode, r.NodeSelector, r.Isolated)
	starting := 0
	for _, i := range ps.provisioning {
		if r.PerNode.Fits(s.nodes.capacity[i]) && matches(s.nodes.labels[i], r.NodeSelector) {
			starting++
		}
	}
	missing := n - len(free) - starting
	headroom := ps.MaxNodes - ps.total
	canGrow := r.PerNode.Fits(ps.Size) && matches(ps.Labels, r.NodeSelector) && headroom >= missing
	ps.reserved = free
	if missing > 0 && !canGrow {
		ps.reserved = append(ps.reserved, ps.idx.takeBusy(r.PerNode, r.NodeSelector, missing)...)
	}
	why := headReason(ps, n, len(free), starting, missing, canGrow)
	if r.Isolated {
		why = isolatedReason(ps, n) + ": " + strings.TrimPrefix(why, "waiting for ")
	}
	s.wait(r, CauseCapacity, why)
}

func (s *state) wait(r *Run, c Cause, reason string) {
	s.waiting = append(s.waiting, Wait{Run: r.ID, Pool: r.Pool, Cause: c, Reason: reason, Unschedulable: c == CauseImpossible})
}

// names maps node indices to their IDs, sorted.
func (s *state) names(idx []int) []string {
	slices.Sort(idx)
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = s.nodes.ids[i]
	}
	return out
}

// finish assembles the plan.
func (s *state) finish(in Input) Plan {
	p := Plan{At: in.Now, Placements: s.placements, Waiting: s.waiting}
	for _, ps := range s.sortedPools {
		if ps.head != nil && len(ps.reserved) > 0 {
			p.Reservations = append(p.Reservations, Reservation{Run: ps.head.ID, Pool: ps.ID, Nodes: s.names(slices.Clone(ps.reserved))})
		}
	}
	p.Demand = s.demand
	return p
}
