package controller

import (
	"context"
	"errors"
	"sync"
	"time"
)

// callsPerTarget bounds the backend calls in flight per target: a target that hangs holds at
// most this many goroutines, and a slow one cannot take the loop, or another target, with it.
const callsPerTarget = 4

// call is one piece of work for a run on a target: its backend calls and their effects on the
// run (through the store and the state machine). It returns nothing: it records what its
// backend calls taught about the target with calls.record.
type call struct {
	run    string
	submit bool // counts against the target's free slots (max_concurrent_runs) while it runs
	fn     func()
}

// targetCalls is one target's calls and health.
type targetCalls struct {
	health    targetHealth
	running   int
	submits   int // submit calls queued or running
	queue     []*call
	lastProbe time.Time // the Until the loop last woke the target for
}

// calls runs backend calls per target, independently of the loop and of other targets: at
// most callsPerTarget at once per target, never two for the same run, none while the target is
// backed off after transient failures (then one probe at a time). The loop decides; calls only
// carries out.
type calls struct {
	now func() time.Time
	// kick asks the loop for a pass (a target's health changed, queued calls were dropped).
	kick func()

	mu      sync.Mutex
	idle    *sync.Cond // signalled when nothing runs
	total   int        // calls queued or running
	targets map[string]*targetCalls
	busy    map[string]bool // runs with a call queued or running
}

func newCalls(now func() time.Time, kick func()) *calls {
	c := &calls{now: now, kick: kick, targets: map[string]*targetCalls{}, busy: map[string]bool{}}
	c.idle = sync.NewCond(&c.mu)
	return c
}

func (c *calls) target(name string) *targetCalls {
	tc := c.targets[name]
	if tc == nil {
		tc = &targetCalls{}
		c.targets[name] = tc
	}
	return tc
}

// start runs fn for the run on the target when allowed: it reports false (and does nothing)
// while the run has a call already, or the target is backed off.
func (c *calls) start(target string, cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tc := c.target(target)
	if c.busy[cl.run] || !tc.health.allow(c.now(), tc.running+len(tc.queue)) {
		return false
	}
	c.busy[cl.run] = true
	c.total++
	if cl.submit {
		tc.submits++
	}
	if tc.running >= callsPerTarget {
		tc.queue = append(tc.queue, cl)
		return true
	}
	tc.running++
	go c.exec(target, cl)
	return true
}

// exec runs one call, then the target's next queued call, if its health still allows one
// (else the queued calls are dropped: their runs are looked at again by the loop).
func (c *calls) exec(target string, cl *call) {
	for cl != nil {
		cl.fn()
		c.mu.Lock()
		tc := c.target(target)
		c.finish(tc, cl)
		cl = nil
		dropped := false
		if len(tc.queue) > 0 {
			if tc.health.allow(c.now(), tc.running) {
				cl, tc.queue = tc.queue[0], tc.queue[1:]
			} else {
				for _, q := range tc.queue {
					c.finish(tc, q)
				}
				tc.queue, dropped = nil, true
			}
		}
		if cl == nil {
			tc.running--
		}
		if c.total == 0 {
			c.idle.Broadcast()
		}
		c.mu.Unlock()
		if dropped {
			c.kick()
		}
	}
}

// finish forgets a call that ran or was dropped; the caller holds mu.
func (c *calls) finish(tc *targetCalls, cl *call) {
	delete(c.busy, cl.run)
	c.total--
	if cl.submit {
		tc.submits--
	}
}

// record notes the outcome of a backend call to the target and returns its health after it. A
// call cut short because the server is stopping teaches nothing.
func (c *calls) record(target string, err error) targetHealth {
	c.mu.Lock()
	defer c.mu.Unlock()
	tc := c.target(target)
	if errors.Is(err, context.Canceled) {
		return tc.health
	}
	was := tc.health.Down()
	tc.health = tc.health.record(err, c.now())
	if was != tc.health.Down() {
		c.kick() // the runs waiting on it are looked at again (Kick does not block)
	}
	return tc.health
}

// health is a target's health now.
func (c *calls) health(target string) targetHealth {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target(target).health
}

// isBusy reports whether a run has a call queued or running.
func (c *calls) isBusy(run string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.busy[run]
}

// forget resets what is known of a target (it was deleted or its spec changed).
func (c *calls) forget(target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tc := c.targets[target]; tc != nil {
		tc.health = targetHealth{}
	}
}

// targetView is what the loop needs of a target's calls for one pass.
type targetView struct {
	health   targetHealth
	inflight int // calls queued or running
	submits  int
	// probeDue is true once per backoff, when it ended: the loop looks at the target's runs then.
	probeDue bool
}

// snapshot returns every known target's view and the runs that have a call, for one pass.
func (c *calls) snapshot(now time.Time) (map[string]targetView, map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]targetView, len(c.targets))
	for name, tc := range c.targets {
		v := targetView{health: tc.health, inflight: tc.running + len(tc.queue), submits: tc.submits}
		if tc.health.Down() && !now.Before(tc.health.Until) && !tc.lastProbe.Equal(tc.health.Until) {
			v.probeDue, tc.lastProbe = true, tc.health.Until
		}
		out[name] = v
	}
	busy := make(map[string]bool, len(c.busy))
	for id := range c.busy {
		busy[id] = true
	}
	return out, busy
}

// wait blocks until no call is queued or running (tests, and a pass that must see its
// effects).
func (c *calls) wait() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.total > 0 {
		c.idle.Wait()
	}
}
