package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

var (
	propSizes = []resources.Vector{size4, gpu2, {MilliCPU: 16 * resources.Core, Memory: 64 * resources.Gi, GPU: 4}}
	propReqs  = []resources.Vector{{}, cores(1), cores(2), cores(4), {MilliCPU: 500, Memory: resources.Gi},
		{MilliCPU: 2000, Memory: 8 * resources.Gi, GPU: 1}, {GPU: 2}, cores(8)}
	propLabels = []map[string]string{nil, {"zone": "a"}, {"zone": "b"}}
	propStates = []compute.NodeState{compute.NodeProvisioning, compute.NodeIdle, compute.NodeRunning, compute.NodeReleasing, compute.NodePreempted, compute.NodeUnusable}
)

// genInput draws a small but varied snapshot: a few pools, nodes in every state (some
// partly allocated), runs of every shape, quotas and user limits.
func genInput(t *rapid.T) Input {
	var in Input
	for p := range rapid.IntRange(1, 3).Draw(t, "pools") {
		in.Pools = append(in.Pools, Pool{ID: fmt.Sprintf("p%d", p), MaxNodes: rapid.IntRange(0, 6).Draw(t, "max"),
			Size: rapid.SampledFrom(propSizes).Draw(t, "size"), Labels: rapid.SampledFrom(propLabels).Draw(t, "plabels")})
	}
	for i := range rapid.IntRange(0, 12).Draw(t, "nodes") {
		p := in.Pools[rapid.IntRange(0, len(in.Pools)-1).Draw(t, "npool")]
		alloc := resources.Vector{}
		for range rapid.IntRange(0, 3).Draw(t, "allocs") {
			if a := alloc.Add(rapid.SampledFrom(propReqs).Draw(t, "alloc")); a.Fits(p.Size) {
				alloc = a
			}
		}
		in.Nodes = append(in.Nodes, Node{ID: fmt.Sprintf("n%02d", i), Pool: p.ID, State: rapid.SampledFrom(propStates).Draw(t, "state"),
			Capacity: p.Size, Allocated: alloc, Labels: rapid.SampledFrom(propLabels).Draw(t, "labels")})
	}
	users := []string{"ann", "bob", "cy"}
	families := []string{"D", "NC"}
	for i := range rapid.IntRange(0, 20).Draw(t, "runs") {
		in.Queue = append(in.Queue, Run{ID: fmt.Sprintf("r%02d", i),
			Pool: fmt.Sprintf("p%d", rapid.IntRange(0, 3).Draw(t, "rpool")), User: rapid.SampledFrom(users).Draw(t, "user"),
			Priority:      Priority(rapid.IntRange(0, 2).Draw(t, "prio")),
			SubmitTime:    t0.Add(time.Duration(rapid.IntRange(0, 5).Draw(t, "submit")) * time.Second),
			InstanceCount: rapid.IntRange(0, 4).Draw(t, "count"), PerNode: rapid.SampledFrom(propReqs).Draw(t, "req"),
			NodeSelector: rapid.SampledFrom(propLabels).Draw(t, "sel"), Family: rapid.SampledFrom(families).Draw(t, "family"),
			QuotaCPU: int64(rapid.SampledFrom([]int{0, 0, 4000, 16000}).Draw(t, "qcpu")), Isolated: rapid.Bool().Draw(t, "isolated")})
	}
	for i := range rapid.IntRange(0, 4).Draw(t, "running") {
		in.Running = append(in.Running, Running{ID: fmt.Sprintf("x%d", i), User: rapid.SampledFrom(users).Draw(t, "ruser"),
			Family: rapid.SampledFrom(families).Draw(t, "rfamily"), Nodes: []string{rapid.SampledFrom([]string{"n00", "n01"}).Draw(t, "rnode")},
			PerNode: cores(4), Isolated: rapid.Bool().Draw(t, "risolated")})
	}
	if rapid.Bool().Draw(t, "quotas") {
		in.Quotas = map[string]int64{"D": int64(rapid.IntRange(0, 40).Draw(t, "quotaD")) * 1000}
	}
	in.DefaultUserLimit = rapid.IntRange(0, 4).Draw(t, "defaultLimit")
	in.UserLimits = map[string]int{"bob": rapid.IntRange(0, 2).Draw(t, "bobLimit")}
	return in
}

func TestSchedulePropertiesHold(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		checkPlan(t, in, Schedule(in))
	})
}

func TestScheduleDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		want := Schedule(in)
		if diff := cmp.Diff(want, Schedule(in)); diff != "" {
			t.Fatalf("second run differs:\n%s", diff)
		}
		shuffled := in
		shuffled.Pools = rapid.Permutation(in.Pools).Draw(t, "pools order")
		shuffled.Nodes = rapid.Permutation(in.Nodes).Draw(t, "nodes order")
		shuffled.Queue = rapid.Permutation(in.Queue).Draw(t, "queue order")
		shuffled.Running = rapid.Permutation(in.Running).Draw(t, "running order")
		if diff := cmp.Diff(want, Schedule(shuffled)); diff != "" {
			t.Fatalf("shuffled input gives another plan:\n%s", diff)
		}
	})
}

// checkPlan asserts the hard rules on a plan.
func checkPlan(t *rapid.T, in Input, p Plan) {
	runs, nodes, pools := map[string]Run{}, map[string]Node{}, map[string]Pool{}
	for _, r := range in.Queue {
		runs[r.ID] = r
	}
	for _, n := range in.Nodes {
		nodes[n.ID] = n
	}
	for _, pl := range in.Pools {
		pools[pl.ID] = pl
	}
	seen := map[string]int{}
	taken := map[string]resources.Vector{}
	used, userRuns := map[string]int64{}, map[string]int{}
	for _, r := range in.Running {
		used[r.Family] += quotaCost(r.QuotaCPU, len(r.Nodes), r.PerNode)
		userRuns[r.User]++
	}
	for _, pl := range p.Placements {
		seen[pl.Run]++
		r := runs[pl.Run]
		if len(pl.Nodes) != instances(&r) || len(slices.Compact(slices.Clone(pl.Nodes))) != len(pl.Nodes) {
			t.Fatalf("run %s wants %d distinct nodes, got %v", r.ID, instances(&r), pl.Nodes)
		}
		for _, id := range pl.Nodes {
			n, ok := nodes[id]
			if !ok || n.Pool != r.Pool || !n.State.Ready() || !matches(n.Labels, r.NodeSelector) {
				t.Fatalf("run %s placed on unsuitable node %+v", r.ID, n)
			}
			taken[id] = taken[id].Add(r.PerNode)
		}
		used[r.Family] += quotaCost(r.QuotaCPU, instances(&r), r.PerNode)
		userRuns[r.User]++
		if q, ok := in.Quotas[r.Family]; ok && quotaCost(r.QuotaCPU, instances(&r), r.PerNode) > 0 && used[r.Family] > q {
			t.Fatalf("family %s over quota: %d > %d", r.Family, used[r.Family], q)
		}
		l, ok := in.UserLimits[r.User]
		if !ok {
			l = in.DefaultUserLimit
		}
		if l > 0 && userRuns[r.User] > l {
			t.Fatalf("user %s over limit: %d > %d", r.User, userRuns[r.User], l)
		}
	}
	for id, v := range taken {
		if n := nodes[id]; !n.Allocated.Add(v).Fits(n.Capacity) {
			t.Fatalf("node %s over-committed: %v + %v > %v", id, n.Allocated, v, n.Capacity)
		}
	}
	for _, w := range p.Waiting {
		seen[w.Run]++
		if w.Reason == "" || w.Unschedulable != (w.Cause == CauseImpossible) {
			t.Fatalf("bad wait %+v", w)
		}
	}
	for id := range runs {
		if seen[id] != 1 {
			t.Fatalf("run %s appears %d times in the plan", id, seen[id])
		}
	}
	checkReservations(t, in, p, pools)
	checkIsolation(t, in, p, runs)
}

// checkIsolation asserts that a node never holds an isolated run beside anything else.
func checkIsolation(t *rapid.T, in Input, p Plan, runs map[string]Run) {
	holders := map[string][]bool{} // node → isolated flag of every run on it
	for _, r := range in.Running {
		for _, n := range r.Nodes {
			holders[n] = append(holders[n], r.Isolated)
		}
	}
	for _, n := range in.Nodes {
		if !n.Allocated.IsZero() && len(holders[n.ID]) == 0 {
			holders[n.ID] = append(holders[n.ID], false)
		}
	}
	for _, pl := range p.Placements {
		for _, n := range pl.Nodes {
			holders[n] = append(holders[n], runs[pl.Run].Isolated)
		}
	}
	for _, pl := range p.Placements {
		for _, n := range pl.Nodes {
			if h := holders[n]; len(h) > 1 && slices.Contains(h, true) {
				t.Fatalf("node %s holds an isolated run beside others: %v", n, h)
			}
		}
	}
}

// checkReservations asserts that no run after a reservation's holder uses its nodes, and
// that demand stays within MaxNodes.
func checkReservations(t *rapid.T, in Input, p Plan, pools map[string]Pool) {
	order := map[string]int{}
	q := make([]*Run, len(in.Queue))
	for i := range in.Queue {
		q[i] = &in.Queue[i]
	}
	slices.SortFunc(q, queueOrder)
	for i, r := range q {
		order[r.ID] = i
	}
	for _, res := range p.Reservations {
		for _, pl := range p.Placements {
			if order[pl.Run] > order[res.Run] && slices.ContainsFunc(pl.Nodes, func(n string) bool { return slices.Contains(res.Nodes, n) }) {
				t.Fatalf("run %s placed on nodes %v reserved for %s", pl.Run, pl.Nodes, res.Run)
			}
		}
	}
	total := map[string]int{}
	for _, n := range in.Nodes {
		total[n.Pool]++
	}
	for _, d := range p.Demand {
		if d.Nodes < 0 || d.Nodes > max(0, pools[d.Pool].MaxNodes-total[d.Pool]) {
			t.Fatalf("demand %+v beyond max %d with %d nodes", d, pools[d.Pool].MaxNodes, total[d.Pool])
		}
	}
}
