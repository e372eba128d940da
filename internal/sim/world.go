package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

// node is a simulated cluster node.
type node struct {
	id    string
	pool  *pool
	state compute.NodeState
	// created, joined and idleSince are what the real system would record; joinAt,
	// preemptAt and goneAt are the provider's secrets: when it joins, is preempted, is gone.
	created, joined, idleSince time.Time
	joinAt, preemptAt, goneAt  time.Time
	neverJoins                 bool
	alloc                      resources.Vector
	runs                       []*run
	reserved                   bool
}

// pool is a simulated cluster.
type pool struct {
	PoolConfig
	nodes   []*node // alive, in creation order
	backoff autoscaler.Backoff
	seq     int
}

// run is one job's life in the simulation.
type run struct {
	job         *Job
	submit      time.Time
	firstStart  time.Time
	end         time.Time
	nodes       []*node
	preemptions int
	// started is when the current attempt started; done is the work saved by earlier ones.
	started time.Time
	saved   time.Duration
	done    bool
	failed  bool
}

// world is the simulated workspace at one instant.
type world struct {
	cfg     Config
	now     time.Time
	rng     *rand.Rand // the provider's randomness
	pools   []*pool    // by ID
	byPool  map[string]*pool
	jobs    []Job
	next    int // index of the next job to arrive
	runs    map[string]*run
	queue   []*run
	running []*run
	st      stats
}

// stats are the counters a simulation accumulates.
type stats struct {
	nodeTime, busyTime         time.Duration
	scaleUps, created, requeue int
	lost                       time.Duration
}

func newWorld(cfg Config, jobs []Job) *world {
	w := &world{cfg: cfg, now: cfg.Start, jobs: jobs, byPool: map[string]*pool{}, runs: map[string]*run{},
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x70726f76))} // "prov"
	for _, pc := range cfg.Pools {
		p := &pool{PoolConfig: pc}
		w.pools = append(w.pools, p)
		w.byPool[pc.ID] = p
	}
	slices.SortFunc(w.pools, func(a, b *pool) int { return strings.Compare(a.ID, b.ID) })
	return w
}

// events moves the world to w.now: runs end, nodes join, go and are preempted, jobs arrive.
func (w *world) events() {
	w.running = slices.DeleteFunc(w.running, func(r *run) bool {
		if r.end.After(w.now) {
			return false
		}
		r.done = true
		w.free(r)
		return true
	})
	for _, p := range w.pools {
		p.nodes = slices.DeleteFunc(p.nodes, func(n *node) bool {
			switch {
			case n.state == compute.NodeProvisioning && !n.neverJoins && !n.joinAt.After(w.now):
				n.state, n.joined, n.idleSince = compute.NodeIdle, w.now, w.now
			case n.state == compute.NodeReleasing && !n.goneAt.After(w.now):
				return true
			case n.state.Ready() && !n.preemptAt.IsZero() && !n.preemptAt.After(w.now):
				n.state = compute.NodePreempted
			}
			return false
		})
	}
	for ; w.next < len(w.jobs) && w.cfg.Start.Add(w.jobs[w.next].Submit).Compare(w.now) <= 0; w.next++ {
		j := &w.jobs[w.next]
		r := &run{job: j, submit: w.cfg.Start.Add(j.Submit)}
		w.runs[j.ID] = r
		w.queue = append(w.queue, r)
	}
}

// free takes a run off its nodes; a node left empty becomes idle.
func (w *world) free(r *run) {
	for _, n := range r.nodes {
		n.alloc = n.alloc.Sub(r.job.PerNode)
		n.runs = slices.DeleteFunc(n.runs, func(x *run) bool { return x == r })
		if len(n.runs) == 0 && n.state == compute.NodeRunning {
			n.state, n.idleSince = compute.NodeIdle, w.now
		}
	}
	r.nodes = nil
}

// interrupted reports whether one of a run's nodes was preempted.
func (r *run) interrupted() bool {
	return slices.ContainsFunc(r.nodes, func(n *node) bool { return n.state == compute.NodePreempted })
}

// account charges one tick of every node that exists, and of the busy ones.
func (w *world) account() {
	for _, p := range w.pools {
		for _, n := range p.nodes {
			w.st.nodeTime += w.cfg.Tick
			if len(n.runs) > 0 {
				w.st.busyTime += w.cfg.Tick
			}
		}
	}
}

// create starts provisioning one node of p.
func (w *world) create(p *pool) {
	p.seq++
	boot := w.cfg.BootMin + time.Duration(w.rng.Int64N(int64(w.cfg.BootMax-w.cfg.BootMin)+1))
	n := &node{id: fmt.Sprintf("%s-%05d", p.ID, p.seq), pool: p, state: compute.NodeProvisioning, created: w.now,
		joinAt: w.now.Add(boot), neverJoins: w.rng.Float64() < w.cfg.BootFailure}
	if p.Tier == autoscaler.LowPriority && w.cfg.PreemptPerHour > 0 {
		n.preemptAt = n.joinAt.Add(expo(w.rng, w.cfg.PreemptPerHour))
	}
	p.nodes = append(p.nodes, n)
}
