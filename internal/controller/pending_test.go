package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// queueFake is the fake backend with an engine queue of its own (backend.Pender).
type queueFake struct {
	*backendtest.Fake
	reason  string
	pending bool
}

func (q *queueFake) Pending(context.Context, backend.Handle) (string, bool, error) {
	return q.reason, q.pending, nil
}

// A run waiting in its engine's queue shows the engine's reason and its silence is not held
// against it (Status is not even asked); once it leaves the queue, silence counts again.
func TestPendingInEngineQueue(t *testing.T) {
	f := newFixture(t)
	q := &queueFake{Fake: f.fake, reason: "Slurm job 7 is PENDING: Resources", pending: true}
	f.c.Backends[compute.TypeLocal] = q
	r := f.create(t, job.Spec{})
	f.reconcile(t) // submitted
	for i := 0; i < 3; i++ {
		f.clock.Advance(2 * time.Minute)
		f.reconcile(t)
	}
	got := f.run(t, r.ID)
	if got.Status != job.Queued || got.StatusReason != q.reason {
		t.Fatalf("pending run: %s (%s)", got.Status, got.StatusReason)
	}
	q.reason = "Slurm job 7 is PENDING: Priority"
	f.reconcile(t)
	if got := f.run(t, r.ID); got.StatusReason != q.reason {
		t.Errorf("changed reason not shown: %q", got.StatusReason)
	}
	if calls := f.fake.StatusCalls(); len(calls) != 0 {
		t.Errorf("Status asked while the run waits in the queue: %v", calls)
	}
	// It left the queue and the engine ended it before its supervisor could report: silence counts
	// again, and the backend's verdict ends the run.
	q.pending = false
	f.fake.SetStatus(r.ID, backend.Status{Final: &job.Result{State: job.Failed, Reason: "NODE_FAIL: a node of the job failed"}})
	f.reconcile(t)
	if got := f.run(t, r.ID); got.Status != job.Queued {
		t.Errorf("ended before StaleAfter of silence: %s", got.Status)
	}
	f.clock.Advance(20 * time.Second)
	f.reconcile(t)
	if got := f.run(t, r.ID); got.Status != job.Failed || got.StatusReason != "NODE_FAIL: a node of the job failed" {
		t.Errorf("after the engine ended it: %s (%s)", got.Status, got.StatusReason)
	}
}

// notifyFake is an engine queue that says when a run changed (backend.Notifier), as the
// Kubernetes backend's watches do; it counts the Pending calls.
type notifyFake struct {
	queueFake
	mu     sync.Mutex
	asked  int
	notify func(string)
}

func (n *notifyFake) Pending(ctx context.Context, h backend.Handle) (string, bool, error) {
	n.mu.Lock()
	n.asked++
	n.mu.Unlock()
	return n.queueFake.Pending(ctx, h)
}

func (n *notifyFake) Notify(fn func(string)) { n.notify = fn }

func (n *notifyFake) calls() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.asked
}

// A Notifier's waiting runs are asked about when it says they changed (and on full passes), not
// every pass; a run that waited long is not taken for silent once it leaves the queue; a
// canceled run ends as soon as its engine says its objects are gone, not after StaleAfter.
func TestNotifierAskedWhenTold(t *testing.T) {
	f := newFixture(t)
	n := &notifyFake{queueFake: queueFake{Fake: f.fake, reason: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu", pending: true}}
	f.c.Backends[compute.TypeLocal] = n
	r := f.create(t, job.Spec{})
	f.reconcile(t) // the first pass is a full one: submitted
	if n.notify == nil {
		t.Fatal("the loop did not give the Notifier its callback")
	}
	f.reconcile(t) // a run just submitted: nothing said about it yet
	before := n.calls()
	for range 4 { // the full pass (Resync, 5 minutes) not yet due
		f.clock.Advance(time.Minute)
		f.reconcile(t)
	}
	if got := n.calls() - before; got != 0 {
		t.Fatalf("Pending asked %d times in 4 quiet minutes; want 0 (the queue is asked when it changes)", got)
	}
	f.clock.Advance(time.Minute)
	f.reconcile(t)
	if got := n.calls() - before; got != 1 {
		t.Fatalf("Pending asked %d times on the full pass; want 1 (the safety net)", got)
	}
	before = n.calls()
	n.notify(r.ID)
	f.reconcile(t)
	if got := f.run(t, r.ID); n.calls() != before+1 || got.StatusReason != n.reason {
		t.Fatalf("told: %d calls, reason %q", n.calls()-before, got.StatusReason)
	}

	// It leaves the queue after waiting 10 minutes: its silence counts from now.
	n.pending = false
	n.notify(r.ID)
	f.reconcile(t)
	f.clock.Advance(10 * time.Second)
	f.reconcile(t)
	if got := f.run(t, r.ID); got.Status != job.Queued {
		t.Fatalf("a run that just left the queue: %s (%s)", got.Status, got.StatusReason)
	}
	if calls := f.fake.StatusCalls(); len(calls) != 0 {
		t.Errorf("Status asked of a run that left the queue 10 s ago: %v", calls)
	}
	f.report(t, r.ID, job.Running)

	// Canceled: delivered, then its engine says its objects changed: its end is read at once.
	if _, err := f.c.Cancel(t.Context(), r.ID); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t) // the cancel is delivered
	f.fake.SetStatus(r.ID, backend.Status{Final: &job.Result{State: job.Canceled, Reason: "canceled: its pods are gone"}})
	f.reconcile(t)
	if got := f.run(t, r.ID); got.Status != job.CancelRequested {
		t.Fatalf("before the engine said anything: %s", got.Status)
	}
	n.notify(r.ID)
	f.reconcile(t)
	if got := f.run(t, r.ID); got.Status != job.Canceled {
		t.Errorf("told its objects changed: %s (%s); want Canceled at once", got.Status, got.StatusReason)
	}
}
