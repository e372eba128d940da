package controller

import (
	"context"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// The controller is the one writer of run rows: the server's routes (job archive, the MLflow
// tracking API's runs) change a run through the methods below, never through the store.

// Archive marks a run archived (hidden from job list) or not.
func (c *Controller) Archive(ctx context.Context, id string, archived bool) error {
	return c.Store.RunWrites.SetArchived(ctx, id, archived)
}

// CreateTrackingRun records a run that is not a job (MLflow's runs/create) in experiment expID,
// with its user and tags.
func (n *Tracking) CreateTrackingRun(ctx context.Context, r *job.Run, expID, userID string, tags []tracking.KV) error {
	return n.c.Store.RunWrites.CreateTrackingRun(ctx, r, expID, userID, tags)
}

// UpdateTrackingRun applies MLflow's runs/update to a run (a job's name only; see
// tracking.Update.Apply).
func (n *Tracking) UpdateTrackingRun(ctx context.Context, id string, u tracking.Update) error {
	return n.c.Store.RunWrites.UpdateTrackingRun(ctx, id, u)
}

// SetRunStage soft-deletes ("deleted") or restores ("active") a run (MLflow's runs/delete and
// runs/restore).
func (n *Tracking) SetRunStage(ctx context.Context, id, stage string) error {
	return n.c.Store.RunWrites.SetRunStage(ctx, id, stage)
}

// LogBatch records MLflow's log-batch on a run: its metrics, params and tags.
func (n *Tracking) LogBatch(ctx context.Context, id string, b store.Batch) error {
	return n.c.Store.RunWrites.LogBatch(ctx, id, b)
}

// DeleteRunTag removes a tag from a run (MLflow's delete-tag).
func (n *Tracking) DeleteRunTag(ctx context.Context, id, key string) error {
	return n.c.Store.RunWrites.DeleteRunTag(ctx, id, key)
}
