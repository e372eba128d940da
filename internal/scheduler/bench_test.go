package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

// benchInput builds a busy workspace: pools of 100 nodes in three sizes, most nodes partly
// or fully allocated, and a queue far larger than what fits, in mixed shapes, gang sizes,
// priorities, users (3 runs each at most) and families (one with a tight core quota).
func benchInput(runs, nodes int) Input {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []resources.Vector{
		{MilliCPU: 16 * resources.Core, Memory: 64 * resources.Gi},
		{MilliCPU: 32 * resources.Core, Memory: 128 * resources.Gi},
		{MilliCPU: 24 * resources.Core, Memory: 220 * resources.Gi, GPU: 4},
	}
	families := []string{"D", "E", "NC"}
	var in Input
	in.Quotas = map[string]int64{}
	for p := range max(1, nodes/100) {
		in.Pools = append(in.Pools, Pool{ID: fmt.Sprintf("pool%03d", p), MaxNodes: 120, Size: sizes[p%3]})
	}
	for _, f := range families { // D and NC have room, E soon runs out
		in.Quotas[f] = int64(nodes) * 8 * resources.Core
	}
	in.Quotas["E"] = int64(nodes) * 2 * resources.Core
	states := []compute.NodeState{compute.NodeRunning, compute.NodeRunning, compute.NodeRunning, compute.NodeIdle, compute.NodeProvisioning, compute.NodeReleasing}
	for i := range nodes {
		p := in.Pools[i%len(in.Pools)]
		n := Node{ID: fmt.Sprintf("node%05d", i), Pool: p.ID, State: states[rng.IntN(len(states))], Capacity: p.Size}
		if n.State == compute.NodeRunning {
			f := int64(rng.IntN(5)) // 0/4 … 4/4 of the node taken
			n.Allocated = resources.Vector{MilliCPU: p.Size.MilliCPU * f / 4, Memory: p.Size.Memory * f / 4, GPU: p.Size.GPU * f / 4}
		}
		in.Nodes = append(in.Nodes, n)
	}
	for i := range nodes / 2 {
		in.Running = append(in.Running, Running{ID: fmt.Sprintf("old%06d", i), User: fmt.Sprintf("user%05d", rng.IntN(nodes)),
			Family: families[i%3], Nodes: []string{"x"}, PerNode: resources.Vector{MilliCPU: 8 * resources.Core}})
	}
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range runs {
		pi := rng.IntN(len(in.Pools))
		p := in.Pools[pi]
		frac := []int64{8, 4, 2, 1}[rng.IntN(4)] // 1/8 … a whole node
		req := resources.Vector{MilliCPU: p.Size.MilliCPU / frac, Memory: p.Size.Memory / frac, GPU: p.Size.GPU / frac}
		in.Queue = append(in.Queue, Run{ID: fmt.Sprintf("run%06d", i), Pool: p.ID, User: fmt.Sprintf("user%05d", rng.IntN(nodes)),
			Priority: Priority(rng.IntN(3)), SubmitTime: t0.Add(time.Duration(rng.IntN(86400)) * time.Second),
			InstanceCount: 1 + rng.IntN(4)*rng.IntN(2), PerNode: req, Family: families[pi%3]})
	}
	in.DefaultUserLimit = 3
	return in
}

func BenchmarkSchedule(b *testing.B) {
	for _, sz := range []struct{ runs, nodes int }{{10_000, 1_000}, {100_000, 10_000}} {
		in := benchInput(sz.runs, sz.nodes)
		b.Run(fmt.Sprintf("runs=%d/nodes=%d", sz.runs, sz.nodes), func(b *testing.B) {
			b.ReportAllocs()
			var p Plan
			for b.Loop() {
				p = Schedule(in)
			}
			b.ReportMetric(float64(len(p.Placements)), "placed")
		})
	}
}
