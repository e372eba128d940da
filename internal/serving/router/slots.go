package router

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// depState is one deployment's live state: its replicas, the requests waiting for them, and
// its statistics. Everything but the statistics is guarded by mu.
type depState struct {
	endpoint, name string
	stats          stats

	mu       sync.Mutex
	cfg      Deployment
	replicas []*replicaState
	changed  chan struct{} // closed (and replaced) when a slot frees or the replicas change
	gone     bool
	inFlight int
	waiting  int // for a slot, some replica ready
	held     int // for a replica to be ready
	last     time.Time
	requests int64
}

// replicaState is one replica's live state, kept across tables by its ID.
type replicaState struct {
	id, addr  string // never change: a replica at a new address is a new replicaState
	secret    string // likewise
	ready     bool   // the controller's view
	probedOut bool   // readiness failed FailureThreshold times; back after SuccessThreshold passes
	inFlight  int
	firstSeen time.Time
	probe     probeState
}

func newDepState(endpoint, name string) *depState {
	return &depState{endpoint: endpoint, name: name, changed: make(chan struct{})}
}

func (d *depState) inRotation(rs *replicaState) bool {
	return rs.ready && !rs.probedOut && rs.addr != ""
}

// update takes a new table's view of the deployment, keeping the state of replicas it had.
func (d *depState) update(cfg Deployment, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old := make(map[string]*replicaState, len(d.replicas))
	for _, rs := range d.replicas {
		old[rs.id] = rs
	}
	reps := make([]*replicaState, 0, len(cfg.Replicas))
	for _, rep := range cfg.Replicas {
		rs := old[rep.ID]
		if rs == nil || rs.addr != rep.Addr || rs.secret != rep.Secret {
			rs = &replicaState{id: rep.ID, addr: rep.Addr, secret: rep.Secret, firstSeen: now}
		}
		rs.ready = rep.Ready
		reps = append(reps, rs)
	}
	d.cfg, d.replicas = cfg, reps
	d.broadcastLocked()
}

// remove marks the deployment gone from the table: its waiters give up.
func (d *depState) remove() {
	d.mu.Lock()
	d.gone = true
	d.broadcastLocked()
	d.mu.Unlock()
}

func (d *depState) broadcastLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

func (d *depState) load() Load {
	d.mu.Lock()
	defer d.mu.Unlock()
	return Load{InFlight: d.inFlight, Held: d.waiting + d.held, LastRequest: d.last, Requests: d.requests}
}

// Reasons a request got no replica; each maps to one status (see statusOf).
var (
	errQueueFull   = errors.New("too many pending requests")
	errNoReplica   = errors.New("no ready replica")
	errTooManyHeld = errors.New("too many requests held")
	errGone        = errors.New("deployment removed")
)

// slotError says why a request got no replica, in the user's terms.
type slotError struct {
	kind error
	msg  string
}

func (e *slotError) Error() string { return e.msg }
func (e *slotError) Unwrap() error { return e.kind }

// limits are a deployment's request settings with their defaults.
type limits struct {
	perReplica int
	queueWait  time.Duration
	timeout    time.Duration
}

func (d *depState) limitsLocked() limits {
	rq := d.cfg.Request
	l := limits{perReplica: rq.MaxConcurrentRequestsPerInstance,
		queueWait: time.Duration(rq.MaxQueueWaitMS) * time.Millisecond,
		timeout:   time.Duration(rq.RequestTimeoutMS) * time.Millisecond}
	l.perReplica = orDefault(l.perReplica, 1)
	l.queueWait = orDefault(l.queueWait, DefaultMaxQueueWait)
	l.timeout = orDefault(l.timeout, DefaultRequestTimeout)
	return l
}

// pickLocked is the ready replica with the fewest requests in flight and a free slot (ties: the
// first in the table), and whether any replica is ready at all.
func (d *depState) pickLocked(perReplica int) (best *replicaState, anyReady bool) {
	for _, rs := range d.replicas {
		if !d.inRotation(rs) {
			continue
		}
		anyReady = true
		if rs.inFlight < perReplica && (best == nil || rs.inFlight < best.inFlight) {
			best = rs
		}
	}
	return best, anyReady
}

func (d *depState) takeLocked(rs *replicaState, now time.Time) {
	rs.inFlight++
	d.inFlight++
	d.requests++
	d.last = now
}

// tryAcquire takes a slot without waiting (for mirrored copies).
func (d *depState) tryAcquire(now time.Time) (*replicaState, limits, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.limitsLocked()
	if d.gone {
		return nil, l, false
	}
	rs, _ := d.pickLocked(l.perReplica)
	if rs == nil {
		return nil, l, false
	}
	d.takeLocked(rs, now)
	return rs, l, true
}

// acquire takes a slot on a replica: at once when one is free; else it waits up to
// max_queue_wait_ms for one (at most perReplica × ready replicas wait, like Azure's
// 2 × max_concurrent × instances in all), or, with no ready replica, holds the request
// up to the router's hold timeout while one starts.
func (r *Router) acquire(ctx context.Context, d *depState) (*replicaState, limits, error) {
	now := r.cfg.Now()
	d.mu.Lock()
	l := d.limitsLocked()
	d.last = now
	var queueBy, holdBy time.Time
	woke := false
	for {
		if d.gone {
			d.mu.Unlock()
			return nil, l, &slotError{errGone, fmt.Sprintf("deployment %s was removed from endpoint %s", d.name, d.endpoint)}
		}
		rs, anyReady := d.pickLocked(l.perReplica)
		if rs != nil {
			d.takeLocked(rs, now)
			d.mu.Unlock()
			return rs, l, nil
		}
		var until time.Time
		var counter *int
		if anyReady {
			if queueBy.IsZero() {
				if d.waiting >= l.perReplica*d.readyLocked() {
					d.mu.Unlock()
					return nil, l, r.queueFull(d, l)
				}
				queueBy = now.Add(l.queueWait)
			}
			until, counter = queueBy, &d.waiting
		} else {
			if holdBy.IsZero() {
				if d.held >= r.cfg.MaxHeld {
					d.mu.Unlock()
					return nil, l, &slotError{errTooManyHeld, fmt.Sprintf("deployment %s has no ready replica and %d requests already wait for one", d.name, d.held)}
				}
				holdBy = now.Add(r.cfg.HoldTimeout)
			}
			until, counter = holdBy, &d.held
		}
		wait := until.Sub(now)
		if wait <= 0 {
			d.mu.Unlock()
			if anyReady {
				return nil, l, r.queueFull(d, l)
			}
			return nil, l, &slotError{errNoReplica, fmt.Sprintf("deployment %s had no ready replica within %s", d.name, r.cfg.HoldTimeout)}
		}
		ch := d.changed
		*counter++
		d.mu.Unlock()
		if !anyReady && !woke {
			woke = true
			r.cfg.Wake(d.endpoint, d.name)
		}
		err := waitFor(ctx, ch, wait)
		d.mu.Lock()
		*counter--
		if err != nil {
			d.mu.Unlock()
			return nil, l, err
		}
		now = r.cfg.Now()
	}
}

func (r *Router) queueFull(d *depState, l limits) error {
	return &slotError{errQueueFull, fmt.Sprintf(
		"too many pending requests: deployment %s serves %d at a time per replica (request_settings.max_concurrent_requests_per_instance) and none freed within %s (max_queue_wait_ms); retry with backoff",
		d.name, l.perReplica, l.queueWait)}
}

func (d *depState) readyLocked() int {
	n := 0
	for _, rs := range d.replicas {
		if d.inRotation(rs) {
			n++
		}
	}
	return n
}

// waitFor returns nil when ch closes or the wait is over (the caller looks again), or the
// context's error.
func waitFor(ctx context.Context, ch <-chan struct{}, wait time.Duration) error {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (d *depState) release(rs *replicaState) {
	d.mu.Lock()
	rs.inFlight--
	d.inFlight--
	if d.waiting > 0 {
		d.broadcastLocked()
	}
	d.mu.Unlock()
}
