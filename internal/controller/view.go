package controller

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// The loop keeps a small view of every active run (runView) so that a pass reads from the
// store only what changed: the runs it was told about (Changed), and the runs the view says
// need a look (pass, pure). A pass at start, and every Settings.Resync, rereads every active run.
// The view is a hint: every action reads its run again and acts on what it reads.

// runView is what the loop decides from without reading a run.
type runView struct {
	ID, Compute        string
	Status             job.State
	Handled            bool
	CancelSent         bool
	Reason             string
	Created, Heartbeat time.Time
	Ended              time.Time
}

func viewOf(r *job.Run) runView {
	return runView{ID: r.ID, Compute: r.Compute, Status: r.Status, Handled: len(r.Handle) > 0, CancelSent: r.CancelSent,
		Reason: r.StatusReason, Created: r.CreatedAt, Heartbeat: r.LastHeartbeat, Ended: ended(r)}
}

func ended(r *job.Run) time.Time {
	if r.EndedAt == nil {
		return time.Time{}
	}
	return *r.EndedAt
}

// owesCancel says whether a run ended Canceled before its backend took the cancel (the call
// failed, or the supervisor stopped first and the call then failed): what the backend holds
// for it (a pod, a Deployment's replica) may still be there, so the cancel is sent again
// (owedCancelWindow). Backends answer nil to a cancel of a run that ended Canceled
// (backendtest's SubmitIdempotentReattachCancel).
func owesCancel(r *job.Run) bool {
	return r.Status == job.Canceled && len(r.Handle) > 0 && !r.CancelSent && !r.Spec.IsParent()
}

// owedCancelWindow is how long after a run's end its undelivered cancel is tried again; after
// it the loop gives up, saying so in its log.
const owedCancelWindow = time.Hour

// view is the loop's own (one goroutine): active runs by id, the full runs of Placer targets
// (a Placer decides from whole runs, and is called on every change of its targets), and the
// ended runs that are still owed a cancel (owesCancel).
type view struct {
	runs     map[string]runView
	placed   map[string]*job.Run
	owed     map[string]runView
	resyncAt time.Time // zero: the next pass rereads everything
}

// put records a run as read; a terminal run leaves the view, unless it is owed a cancel.
func (v *view) put(r *job.Run, placer bool) {
	if r.Status.Terminal() || r.Spec.IsParent() { // a sweep or pipeline parent is its loop's, never a backend's
		v.drop(r.ID)
		if owesCancel(r) {
			v.owed[r.ID] = viewOf(r)
		}
		return
	}
	v.runs[r.ID] = viewOf(r)
	if placer {
		v.placed[r.ID] = r
	} else {
		delete(v.placed, r.ID)
	}
}

func (v *view) drop(id string) {
	delete(v.runs, id)
	delete(v.placed, id)
	delete(v.owed, id)
}

// heard raises a run's last heartbeat (supervisors' heartbeats write that column alone, and
// tell the loop through beats, not Changed).
func (v *view) heard(id string, at time.Time) {
	if rv, ok := v.runs[id]; ok && at.After(rv.Heartbeat) {
		rv.Heartbeat = at
		v.runs[id] = rv
	}
}

// placerRuns are the active runs of the given targets, oldest first.
func (v *view) placerRuns(targets map[string]bool) []*job.Run {
	var out []*job.Run
	for _, r := range v.placed {
		if targets[r.Compute] {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *job.Run) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// news collects, between passes, what the loop was told: the runs that changed, the
// heartbeats heard, and whether something else changed for Placers (Kick).
type news struct {
	mu     sync.Mutex
	runs   map[string]bool
	beats  map[string]time.Time
	kicked bool
	// nudged are the runs whose objects in their engine changed (a backend.Notifier said so).
	nudged map[string]bool
}

func (c *news) run(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	put(&c.runs, id, true)
}

func (c *news) beat(id string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	put(&c.beats, id, at)
}

// nudge records that a run's state in its engine changed (backend.Notifier's callback).
func (c *news) nudge(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	put(&c.nudged, id, true)
}

// put sets (*m)[k], making the map first when there is none (the news are nil once taken).
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

// takeNudged returns the runs nudged since the last call and starts over.
func (c *news) takeNudged() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nudged
	c.nudged = nil
	return n
}

func (c *news) kick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kicked = true
}

// take returns what was collected and starts over.
func (c *news) take() (runs map[string]bool, beats map[string]time.Time, kicked bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	runs, beats, kicked = c.runs, c.beats, c.kicked
	c.runs, c.beats, c.kicked = nil, nil, false
	return runs, beats, kicked
}

// targetPass is what the pass knows of a target in one pass.
type targetPass struct {
	Name string
	// Placer: its backend places its runs (the loop calls Place; the pass leaves them).
	Placer bool
	// Pender: its backend keeps an engine queue (a submitted Queued run is asked about).
	Pender bool
	// Notifies: its backend says when a run changed in its engine (backend.Notifier), so its
	// queued and canceled runs are looked at when nudged, and on full passes, not every pass.
	Notifies bool
	// Max is its max_concurrent_runs (0: no limit).
	Max int
	// Calls is its calls' state (health, calls in flight).
	Calls targetView
	// Unreachable is the reason runs waiting on it show while it is down.
	Unreachable string
}

// looks are the runs a pass reads and acts on, by what is to be done.
type looks struct {
	Submit []string // queued, to hand to their backend (or to fail: target gone)
	Wait   []string // queued, whose waiting reason is out of date (or whose wait expired)
	Watch  []string // handed to a backend: silent for StaleAfter, or in an engine queue
	Cancel []string // cancel requested and not yet delivered (also owed to an ended run)
	// GiveUp are the ended runs whose owed cancel is out of its window: the loop stops trying.
	GiveUp []string
}

// passInput is what pass decides from.
type passInput struct {
	Now        time.Time
	StaleAfter time.Duration
	// Limit is Settings.UnreachableLimit.
	Limit time.Duration
	Runs  map[string]runView
	// Owed are the ended runs still owed a cancel (view.owed).
	Owed    map[string]runView
	Targets map[string]targetPass
	// Busy are the runs with a backend call under way: left alone.
	Busy map[string]bool
	// Nudged are the runs a Notifier said changed since the last pass; Full says this pass
	// rereads everything (the safety net for what a Notifier did not say).
	Nudged map[string]bool
	Full   bool
	// Left are the Queued runs seen out of their engine's queue, since when (queueExits).
	Left map[string]time.Time
}

// pass decides which runs a pass looks at. It is pure: the same input gives the same looks,
// each list sorted oldest run first.
func pass(in passInput) looks {
	var out looks
	queued, handled := map[string][]runView{}, map[string]int{}
	for _, v := range in.Runs {
		if v.Handled {
			handled[v.Compute]++
		}
		if in.Busy[v.ID] {
			continue
		}
		t, known := in.Targets[v.Compute]
		switch {
		case v.Status == job.CancelRequested && !v.CancelSent:
			out.Cancel = append(out.Cancel, v.ID)
		case v.Handled: // a delivered cancel too
			if watched(in, t, v) {
				out.Watch = append(out.Watch, v.ID)
			}
		case v.Status != job.Queued:
		case !known:
			out.Submit = append(out.Submit, v.ID) // its target is gone: submit fails it, saying so
		case !t.Placer:
			queued[v.Compute] = append(queued[v.Compute], v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(queued)) {
		submit, wait := pickInTarget(in, in.Targets[name], handled[name], queued[name])
		out.Submit = append(out.Submit, submit...)
		out.Wait = append(out.Wait, wait...)
	}
	owed := pickOwed(in)
	for _, l := range []*[]string{&out.Submit, &out.Wait, &out.Watch, &out.Cancel} {
		sortOldest(*l, in.Runs)
	}
	out.Cancel = append(out.Cancel, owed.Cancel...)
	out.GiveUp = owed.GiveUp
	return out
}

// pickOwed picks the ended runs owed a cancel: sent again while their end is within
// owedCancelWindow (and no call for them is under way), given up after it or when their target
// is gone (nothing to send it to). Oldest end first.
func pickOwed(in passInput) looks {
	var out looks
	for _, id := range slices.SortedFunc(maps.Keys(in.Owed), func(a, b string) int {
		return cmp.Or(in.Owed[a].Ended.Compare(in.Owed[b].Ended), cmp.Compare(a, b))
	}) {
		switch v := in.Owed[id]; {
		case in.Busy[id]:
		case in.Now.Sub(v.Ended) > owedCancelWindow || in.Targets[v.Compute].Name == "":
			out.GiveUp = append(out.GiveUp, id)
		default:
			out.Cancel = append(out.Cancel, id)
		}
	}
	return out
}

// watched says whether a run handed to its backend is asked about this pass. While it waits in
// an engine queue: every pass, or, for a Notifier's runs, when nudged and on full passes. A
// Notifier's canceled run: when nudged too (its end is seen as soon as its engine says so).
// Otherwise once its supervisor has been silent StaleAfter, counting from when it left its
// engine's queue at the earliest.
func watched(in passInput, t targetPass, v runView) bool {
	heard := v.Heartbeat
	left, out := in.Left[v.ID]
	if out && left.After(heard) {
		heard = left
	}
	waiting := v.Status == job.Queued && t.Pender && !out
	switch {
	case waiting && !t.Notifies:
		return true
	case waiting:
		return in.Nudged[v.ID] || in.Full
	case t.Notifies && v.Status == job.CancelRequested && in.Nudged[v.ID]:
		return true
	}
	return in.Now.Sub(heard) >= in.StaleAfter
}

// pickInTarget splits a target's queued runs into those to submit now and those whose waiting
// reason must change or whose wait on a down target ran out.
// handled counts its runs handed to the backend (each holds a slot of max_concurrent_runs).
func pickInTarget(in passInput, t targetPass, handled int, runs []runView) (submit, wait []string) {
	if h := t.Calls.health; h.Down() {
		// A run whose wait ran out is failed now, not used as the probe: its end must not wait
		// for a probe's timeout, nor for the backoff to let one start.
		runs = slices.DeleteFunc(slices.Clone(runs), func(v runView) bool {
			if h.expired(v.Created, in.Now, in.Limit) {
				wait = append(wait, v.ID)
				return true
			}
			return false
		})
	}
	free, why := len(runs), ""
	switch {
	case t.Calls.health.Down():
		free, why = 0, t.Unreachable
		if t.Calls.health.allow(in.Now, t.Calls.inflight) {
			free = 1 // a probe: the oldest run tries
		}
	case t.Max > 0:
		free = max(t.Max-handled-t.Calls.submits, 0)
		why = fullReason(t.Name, t.Max)
	}
	if free > 0 && free < len(runs) { // which runs go first matters: the oldest (a full target: none)
		slices.SortFunc(runs, func(a, b runView) int {
			return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
		})
	}
	for i, v := range runs {
		switch {
		case i < free:
			submit = append(submit, v.ID)
		case v.Reason != why:
			wait = append(wait, v.ID)
		}
	}
	return submit, wait
}

// fullReason is the waiting reason of a run whose target is at its max_concurrent_runs.
func fullReason(target string, max int) string {
	return fmt.Sprintf("waiting: %d/%d runs running on %s (max_concurrent_runs)", max, max, target)
}

func sortOldest(ids []string, runs map[string]runView) {
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(runs[a].Created.Compare(runs[b].Created), cmp.Compare(a, b))
	})
}

// queueExits remembers when each Queued run was first seen out of its engine's queue (its
// supervisor is starting): its silence counts from then, not from when it was submitted. It is
// written by backend calls and read by the loop. In memory only: after a restart, silences count
// from the loop's start at the earliest anyway.
type queueExits struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// mark records that a run left its engine's queue, unless it was seen out before.
func (q *queueExits) mark(id string, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = map[string]time.Time{}
	}
	if _, ok := q.m[id]; !ok {
		q.m[id] = at
	}
}

// at is when a run was seen out of its queue (zero: never).
func (q *queueExits) at(id string) time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.m[id]
}

// snapshot returns the exits of the Queued runs among active, forgetting the others.
func (q *queueExits) snapshot(active map[string]runView) map[string]time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make(map[string]time.Time, len(q.m))
	for id, at := range q.m {
		if v, ok := active[id]; !ok || v.Status != job.Queued {
			delete(q.m, id)
			continue
		}
		out[id] = at
	}
	return out
}
