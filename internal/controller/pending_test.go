package controller

import (
	"context"
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
