package controller

import (
	"context"
	"fmt"

	"github.com/hangar-ml/hangar/internal/job"
)

// Requeue puts an active run back in the queue as a new attempt, through the run state
// machine's requeue edge (job.Requeued), because it lost its node through no fault of its own (a
// Placer's plan: the node was preempted; `compute node delete`). The old attempt's log is kept
// as attempt_<n>/, and its supervisors are stopped where their machines still exist (their
// reports are refused as a stale attempt either way). A run whose cancel was requested ends
// Canceled instead. It returns whether the run went back to the queue.
func (c *Controller) Requeue(ctx context.Context, id, why string) (bool, error) {
	old, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return false, mapStoreErr(err)
	}
	if old.Status.Terminal() {
		return false, nil
	}
	c.Checkpoints.recordPreemptionLoss(ctx, old)
	r, err := c.transition(ctx, id, job.Requeued, why, nil, nil)
	if err != nil {
		return false, err
	}
	if len(old.Handle) > 0 {
		if b, _, err := c.backendFor(ctx, old); err == nil {
			cctx, cancel := context.WithTimeout(ctx, statusTimeout)
			if err := b.Cancel(cctx, old.Handle); err != nil {
				c.Log.Warn("stop the old attempt", "run", id, "err", err)
			}
			cancel()
		}
	}
	prev := max(old.Attempt, 1)
	if r.Status != job.Queued || r.Attempt <= prev {
		return false, nil
	}
	if err := c.Store.Runs.ArchiveLogs(ctx, id, fmt.Sprintf("attempt_%d", prev)); err != nil {
		c.Log.Error("archive logs", "run", id, "err", err)
	}
	c.Log.Info("requeued", "run", id, "attempt", r.Attempt, "reason", why)
	c.Kick()
	return true, nil
}

// newAttempt starts a requeued run's next attempt (within the transition that takes the requeue
// edge): it has no handle, no placement and no start yet. It returns the reason to record.
func newAttempt(r *job.Run, why string) string {
	old := max(r.Attempt, 1)
	r.Attempt, r.Handle, r.Placement, r.StartedAt, r.CancelSent = old+1, nil, nil, nil, false
	return fmt.Sprintf("%s; attempt %d (the log of attempt %d is kept as attempt_%d/)", why, old+1, old, old)
}
