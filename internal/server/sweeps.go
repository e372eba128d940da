package server

import (
	"context"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// jobTrials answers a sweep's trials with their parameters and primary-metric series (the
// studio's plots read it; job show gets the same inside the run's detail).
func (s *jobRoutes) jobTrials(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, err := s.cfg.Store.Run(ctx, r.PathValue("name"))
	if err != nil {
		s.respond(w, http.StatusOK, nil, err)
		return
	}
	if run.Spec.Sweep == nil {
		writeError(w, s.log, &httpError{http.StatusNotFound, api.CodeNotFound, "job " + run.ID + " is not a sweep"})
		return
	}
	d, err := s.cfg.Controller.SweepDetail(ctx, run)
	s.respond(w, http.StatusOK, d, err)
}

// sweepDetail adds to job show a sweep's trials and best trial, or a trial's sweep.
func (s *jobRoutes) sweepDetail(ctx context.Context, run *job.Run, d *api.RunDetail) error {
	if run.Spec.Sweep != nil {
		sd, err := s.cfg.Controller.SweepDetail(ctx, run)
		if err != nil {
			return err
		}
		d.Sweep = sd
		if sd.BestChildRunID != "" {
			d.Properties = map[string]string{"best_child_run_id": sd.BestChildRunID}
		}
		return nil
	}
	t, ok, err := s.cfg.Store.TrialOf(ctx, run.ID)
	if ok {
		d.TrialOf = &api.TrialOf{Sweep: t.Parent, Index: t.Index, Stopped: t.Stopped}
	}
	return err
}
