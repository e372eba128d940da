package cluster

import (
	"fmt"
	"strconv"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/scheduler"
)

// heldGPUs maps node → GPU index → held, from the runs' placements.
func heldGPUs(runs []*job.Run) map[string]map[string]bool {
	held := map[string]map[string]bool{}
	for _, r := range runs {
		if r.Placement == nil {
			continue
		}
		for n, gs := range r.Placement.GPUs {
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
func pickGPUs(p *pool, pl scheduler.Placement, held map[string]map[string]bool) (map[string][]string, error) {
	want := int(pl.PerNode.GPU)
	if want <= 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, id := range pl.Nodes {
		n := p.node(id)
		if n == nil {
			return nil, fmt.Errorf("node %s is gone", id)
		}
		if held[id] == nil {
			held[id] = map[string]bool{}
		}
		var free []string
		for _, g := range n.GPUs {
			if idx := strconv.Itoa(g.Index); !held[id][idx] && len(free) < want {
				free = append(free, idx)
			}
		}
		if len(free) < want {
			return nil, fmt.Errorf("node %s has %d free GPUs, the run needs %d", id, len(free), want)
		}
		out[id] = free
	}
	for id, gs := range out { // only once every node had enough
		for _, g := range gs {
			held[id][g] = true
		}
	}
	return out, nil
}
