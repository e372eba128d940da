package server

import (
	"context"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// jobSteps answers a pipeline's steps with their states (the studio's graph reads it; job show
// gets the same inside the run's detail).
func (s *jobRoutes) jobSteps(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, err := s.cfg.Store.Run(ctx, r.PathValue("name"))
	if err != nil {
		s.respond(w, http.StatusOK, nil, err)
		return
	}
	if run.Spec.Pipeline == nil {
		writeError(w, s.log, &httpError{http.StatusNotFound, api.CodeNotFound, "job " + run.ID + " is not a pipeline"})
		return
	}
	d, err := s.cfg.Controller.PipelineDetail(ctx, run)
	s.respond(w, http.StatusOK, d, err)
}

// pipelineDetail adds to job show a pipeline's steps, or a step's pipeline.
func (s *jobRoutes) pipelineDetail(ctx context.Context, run *job.Run, d *api.RunDetail) error {
	if run.Spec.Pipeline != nil {
		pd, err := s.cfg.Controller.PipelineDetail(ctx, run)
		d.Pipeline = pd
		return err
	}
	st, ok, err := s.cfg.Store.StepOf(ctx, run.ID)
	if ok {
		d.PipelineOf = &api.PipelineOf{Pipeline: st.Pipeline, Step: st.Name}
	}
	return err
}
