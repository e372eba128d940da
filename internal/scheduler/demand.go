package scheduler

import "maps"

// planDemand works out, per pool, how many nodes beyond the existing and provisioning ones
// would let the runs that wait for nodes start. It replays those runs in queue order on
// what the placements left, with reservations returned, provisioning nodes as empty
// nodes and up to MaxNodes-total new nodes of the pool's size, opened only when a gang
// cannot be completed otherwise; quotas and user limits still apply, so the demand never
// asks for nodes that a run could not use.
func (s *state) planDemand() {
	for _, ps := range s.sortedPools {
		ix := ps.idx
		ix.failed = map[failKey]bool{} // more nodes now: earlier failures no longer hold
		for _, i := range ps.reserved {
			ix.insert(i)
		}
		for _, i := range ps.provisioning {
			ix.insert(i)
		}
		ix.virtualLeft = max(0, ps.MaxNodes-ps.total)
		ix.virtualSize, ix.virtualLabels, ix.virtualKey = ps.Size, ps.Labels, labelKey(ps.Labels)
	}
	used, userRuns := maps.Clone(s.used), maps.Clone(s.userRuns)
	runs, atMax := map[*poolState]int{}, map[*poolState]int{}
	for _, r := range s.blocked {
		ps := s.pools[r.Pool]
		n := instances(r)
		cost := quotaCost(r.QuotaCPU, n, r.PerNode)
		if l := s.userLimit(r.User); l > 0 && userRuns[r.User] >= l {
			continue
		}
		if q, ok := s.quotas[r.Family]; ok && used[r.Family]+cost > q {
			continue
		}
		before := ps.idx.opened
		if _, ok := ps.idx.take(r.PerNode, n, r.NodeSelector, labelKey(r.NodeSelector), r.Isolated); !ok {
			atMax[ps]++
			continue
		}
		used[r.Family] += cost
		userRuns[r.User]++
		if ps.idx.opened > before {
			runs[ps]++
		}
	}
	for _, ps := range s.sortedPools {
		s.demand = append(s.demand, PoolDemand{Pool: ps.ID, Nodes: ps.idx.opened, Runs: runs[ps], AtMax: atMax[ps]})
	}
}
