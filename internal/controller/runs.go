package controller

import (
	"context"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// Runs is the run core's seam: the one writer of run state. Whatever else changes a run (the
// server's routes, the parent loop) does it through these methods; a consumer that needs fewer
// of them declares its own smaller interface.
type Runs interface {
	// Create validates a job against the workspace and stores it as a new run.
	Create(ctx context.Context, req api.CreateJobRequest) (*job.Run, error)
	// Report applies a supervisor's status report (and records the command it ran).
	Report(ctx context.Context, id string, rep api.StatusReport) (*api.StatusReply, error)
	// Cancel asks for a run's end.
	Cancel(ctx context.Context, id string) (*job.Run, error)
	// Requeue puts a run that lost its node back in its queue.
	Requeue(ctx context.Context, id, why string) (bool, error)
	// DeleteRun deletes an ended run; Archive hides it from job list or shows it again.
	DeleteRun(ctx context.Context, id string) error
	Archive(ctx context.Context, id string, archived bool) error
	// OnChange subscribes to run changes; Kick asks the run loop for a pass soon.
	OnChange(fn func(runID string))
	Kick()
}

var _ Runs = (*Controller)(nil)
