package server

import (
	"context"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// runCheckpoint commits a supervisor's uploaded checkpoint (docs/checkpoints.md). Its run's
// token only (runOnly; the attempt header keeps an older attempt out), its body bounded like
// every JSON body (bodies.go).
func (s *runRoutes) runCheckpoint(r *http.Request, cp api.CheckpointCommit) (struct{}, error) {
	return struct{}{}, s.cfg.Controller.Checkpoints.CommitCheckpoint(r.Context(), r.PathValue("id"), cp)
}

// checkpointDetail adds the run's latest checkpoint and what its preemptions cost to job show.
func (s *runRoutes) checkpointDetail(ctx context.Context, run *job.Run, d *api.RunDetail) error {
	d.Checkpoint = s.cfg.Controller.Checkpoints.LatestCheckpoint(ctx, run.ID)
	ps, err := s.cfg.Controller.Checkpoints.Preemptions(ctx, run.ID, d.Events)
	if err != nil {
		return err
	}
	if len(ps) > 0 {
		d.Preemptions = ps
	}
	return nil
}
