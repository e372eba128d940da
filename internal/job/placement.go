package job

import "slices"

// Placement is where a run's current attempt runs when its target places runs on nodes itself
// (a managed cluster's scheduler, see backend.Placer): its nodes in rank order (node 0 leads)
// and, per node, the indexes of the GPUs the run holds there (no two runs share one). It is the
// run's own data, stored with the run for its attempt, whichever backend made it; a run on a
// target that does not place runs has none and runs on one node.
type Placement struct {
	Nodes []string            `json:"nodes"`
	GPUs  map[string][]string `json:"gpus,omitempty"`
}

// NodeCount is how many nodes run a run with this placement: one without a placement.
func (p *Placement) NodeCount() int {
	if p == nil || len(p.Nodes) == 0 {
		return 1
	}
	return len(p.Nodes)
}

// Rank is node's rank in the placement, or -1 when the run is not placed there.
func (p *Placement) Rank(node string) int {
	if p == nil {
		return -1
	}
	return slices.Index(p.Nodes, node)
}

// NodeGPUs are the GPU indexes the run holds on node (nil when none).
func (p *Placement) NodeGPUs(node string) []string {
	if p == nil || p.GPUs == nil {
		return nil
	}
	return slices.Clone(p.GPUs[node])
}

// Equal reports whether two placements name the same nodes, in the same order, with the same GPUs.
func (p *Placement) Equal(q *Placement) bool {
	if p == nil || q == nil {
		return p == q
	}
	if !slices.Equal(p.Nodes, q.Nodes) || len(p.GPUs) != len(q.GPUs) {
		return false
	}
	for n, g := range p.GPUs {
		if !slices.Equal(g, q.GPUs[n]) {
			return false
		}
	}
	return true
}
