package sim

import (
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/scheduler"
)

// Policy is a way of scaling: the real autoscaler, fed an input the policy may rewrite.
type Policy struct {
	Name string
	// Adjust rewrites one cluster's autoscaler input before Decide; waiting is how many of
	// the cluster's runs wait for nodes. Nil leaves the input as Hangar builds it.
	Adjust func(p *autoscaler.Pool, waiting int)
}

// Hangar is the autoscaler as built: scale to the scheduler's demand, release after the
// cluster's idle_time_before_scale_down.
func Hangar() Policy { return Policy{Name: "hangar"} }

// FixedIdle is a simple queue-length policy for comparison: while any run of a cluster
// waits for nodes it adds one node per tick (up to max_instances, whatever the runs
// need), and it releases a node once idle for the fixed idle time, whatever the
// cluster's own setting. Deletion of lost nodes, requeues, Min/Max and backoff are the
// real autoscaler's.
func FixedIdle(idle time.Duration) Policy {
	return Policy{Name: "fixed-idle " + idle.String() + ", +1 node/tick", Adjust: func(p *autoscaler.Pool, waiting int) {
		p.IdleTimeBeforeScaleDown = idle
		p.Demand, p.DemandRuns = min(waiting, 1), min(waiting, 1)
	}}
}

// Result is what one policy's simulation measured.
type Result struct {
	Policy string
	// NodeTime is the time nodes existed (provisioning to gone); BusyTime the part with
	// at least one run on the node.
	NodeTime, BusyTime time.Duration
	// WaitP50 and WaitP95 are the queue waits (submit to first start) of started jobs.
	WaitP50, WaitP95        time.Duration
	Jobs, Completed, Failed int
	ScaleUps, NodesCreated  int
	PreemptionRequeues      int
	Elapsed                 time.Duration // simulated time until the queue drained
	LowerBound              bool          // a computed bound, not a simulation

	// WorkLost is the run time preempted attempts did past their last checkpoint.
	WorkLost time.Duration
}

// Utilisation is BusyTime / NodeTime.
func (r Result) Utilisation() float64 {
	if r.NodeTime == 0 {
		return 0
	}
	return float64(r.BusyTime) / float64(r.NodeTime)
}

// Simulate replays cfg's trace under pol: every tick, events happen, the real Schedule
// places runs, the real Decide scales, and node time is charged. It stops once the
// trace has arrived, every run has ended and the clusters are back to min_instances, or
// Drain after the last submission.
func Simulate(cfg Config, pol Policy) Result {
	jobs := GenerateTrace(cfg.Seed, cfg.Trace)
	w := newWorld(cfg, jobs)
	end := cfg.Start.Add(cfg.Drain)
	if len(jobs) > 0 {
		end = end.Add(jobs[len(jobs)-1].Submit)
	}
	for ; !w.now.After(end); w.now = w.now.Add(cfg.Tick) {
		w.step(pol)
		if w.settled() {
			break
		}
	}
	return w.result(pol.Name)
}

// step is one tick at w.now.
func (w *world) step(pol Policy) {
	w.events()
	plan := scheduler.Schedule(w.schedInput())
	w.applyPlan(plan)
	w.applyDecision(autoscaler.Decide(w.scaleInput(plan, pol)))
	w.account()
}

// settled reports whether nothing is left to happen.
func (w *world) settled() bool {
	if w.next < len(w.jobs) || len(w.queue) > 0 || len(w.running) > 0 {
		return false
	}
	for _, p := range w.pools {
		if len(p.nodes) > p.Min {
			return false
		}
	}
	return true
}

func (w *world) result(name string) Result {
	r := Result{Policy: name, NodeTime: w.st.nodeTime, BusyTime: w.st.busyTime, Jobs: len(w.jobs),
		ScaleUps: w.st.scaleUps, NodesCreated: w.st.created, PreemptionRequeues: w.st.requeue, WorkLost: w.st.lost,
		Elapsed: w.now.Sub(w.cfg.Start)}
	var waits []time.Duration
	for _, j := range w.jobs {
		run := w.runs[j.ID]
		switch {
		case run == nil:
		case run.done:
			r.Completed++
		case run.failed:
			r.Failed++
		}
		if run != nil && !run.firstStart.IsZero() {
			waits = append(waits, run.firstStart.Sub(run.submit))
		}
	}
	r.WaitP50, r.WaitP95 = percentile(waits, 50), percentile(waits, 95)
	return r
}

// LowerBound is the cost of cfg's trace if every job had dedicated nodes exactly while it
// ran: the sum of job node-time, with no wait, no boot and no idle time.
func LowerBound(cfg Config) Result {
	jobs := GenerateTrace(cfg.Seed, cfg.Trace)
	r := Result{Policy: "lower bound: sum of job node-time", Jobs: len(jobs), Completed: len(jobs), LowerBound: true}
	for _, j := range jobs {
		r.NodeTime += j.NodeTime()
	}
	r.BusyTime = r.NodeTime
	return r
}

// percentile is the nearest-rank p-th percentile of ds (0 when empty).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := (p*len(s) + 99) / 100 // ceil(p/100 × n), 1-based
	return s[max(k, 1)-1]
}
