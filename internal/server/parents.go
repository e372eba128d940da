package server

import (
	"context"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// Parents: a sweep's trials and a pipeline's steps, as their own routes and inside job show.

// jobTrials answers a sweep's trials with their parameters and primary-metric series (the
// studio's plots read it; job show gets the same inside the run's detail).
func (s *jobRoutes) jobTrials(w http.ResponseWriter, r *http.Request) {
	parentDetail(s, w, r, "a sweep", func(run *job.Run) bool { return run.Spec.Sweep != nil },
		s.cfg.Controller.Parents.SweepDetail)
}

// sweepDetail adds to job show a sweep's trials and best trial, or a trial's sweep.
func (s *jobRoutes) sweepDetail(ctx context.Context, run *job.Run, d *api.RunDetail) error {
	if run.Spec.Sweep != nil {
		sd, err := s.cfg.Controller.Parents.SweepDetail(ctx, run)
		if err != nil {
			return err
		}
		d.Sweep = sd
		if sd.BestChildRunID != "" {
			d.Properties = map[string]string{"best_child_run_id": sd.BestChildRunID}
		}
		return nil
	}
	t, ok, err := s.cfg.Store.Parents.TrialOf(ctx, run.ID)
	if ok {
		d.TrialOf = &api.TrialOf{Sweep: t.Parent, Index: t.Index, Stopped: t.Stopped}
	}
	return err
}

// jobSteps answers a pipeline's steps with their states (the studio's graph reads it; job show
// gets the same inside the run's detail).
func (s *jobRoutes) jobSteps(w http.ResponseWriter, r *http.Request) {
	parentDetail(s, w, r, "a pipeline", func(run *job.Run) bool { return run.Spec.Pipeline != nil },
		s.cfg.Controller.Parents.PipelineDetail)
}

// parentDetail answers the detail of the parent job named in the path (a sweep's trials, a
// pipeline's steps), or 404 when that job is not one (is says; kind names it).
func parentDetail[D any](s *jobRoutes, w http.ResponseWriter, r *http.Request, kind string,
	is func(*job.Run) bool, detail func(context.Context, *job.Run) (D, error)) {
	ctx := r.Context()
	run, err := s.cfg.Store.Runs.Run(ctx, r.PathValue("name"))
	if err != nil {
		s.respond(w, http.StatusOK, nil, err)
		return
	}
	if !is(run) {
		writeError(w, s.log, &httpError{http.StatusNotFound, api.CodeNotFound, "job " + run.ID + " is not " + kind})
		return
	}
	d, err := detail(ctx, run)
	s.respond(w, http.StatusOK, d, err)
}

// pipelineDetail adds to job show a pipeline's steps, or a step's pipeline.
func (s *jobRoutes) pipelineDetail(ctx context.Context, run *job.Run, d *api.RunDetail) error {
	if run.Spec.Pipeline != nil {
		pd, err := s.cfg.Controller.Parents.PipelineDetail(ctx, run)
		d.Pipeline = pd
		return err
	}
	st, ok, err := s.cfg.Store.Parents.StepOf(ctx, run.ID)
	if ok {
		d.PipelineOf = &api.PipelineOf{Pipeline: st.Pipeline, Step: st.Name}
	}
	return err
}
