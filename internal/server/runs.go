package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangar-ml/hangar/internal/api"
)

// The handlers below serve a run's supervisor.

// routes registers what a run's supervisor calls, each kept to its own run's current attempt
// (runOnly) or an owner.
func (s *runRoutes) routes(_, api routes) {
	ok := http.StatusOK
	for _, r := range []struct {
		pattern string
		h       http.HandlerFunc
	}{
		{"GET /api/runs/{id}/spec", answer(s.Server, ok, s.runSpec)},
		{"POST /api/runs/{id}/status", answerBody(s.Server, ok, s.runStatus)},
		{"POST /api/runs/{id}/heartbeat", answer(s.Server, ok, s.runHeartbeat)},
		{"POST /api/runs/{id}/logs", answerBody(s.Server, ok, s.runLogs)},
		{"POST /api/runs/{id}/metrics", answerBody(s.Server, ok, s.runMetrics)},
		{"POST /api/runs/{id}/artifacts", answerBody(s.Server, ok, s.runArtifacts)},
		{"POST /api/runs/{id}/checkpoint", answerBody(s.Server, ok, s.runCheckpoint)},
		{"GET /api/runs/{id}/container-log", s.runContainerLog},
		{"POST /api/runs/{id}/exec", answerBody(s.Server, http.StatusCreated, s.execCreate)},
		{"GET /api/runs/{id}/exec", s.execTake},
		{"GET /api/runs/{id}/exec/{eid}", s.execGet},
		{"POST /api/runs/{id}/exec/{eid}/done", noContentBody(s.Server, s.execDone)},
	} {
		api.handle(r.pattern, runAccess, s.runOnly(r.h))
	}
}

// runSpec answers a run's supervisor its spec. The fresh run token in it goes to the run's own
// token only: an owner reading the spec gets none, so no user holds a run token, which would
// read the values of the secrets the run names (GET /api/runs/{id}/secrets).
func (s *runRoutes) runSpec(r *http.Request) (any, error) {
	spec, err := s.cfg.Controller.RunSpec(r.Context(), r.PathValue("id"), r.URL.Query().Get("node"), s.cfg.URL())
	if err == nil && s.cfg.Servers != nil {
		spec.Servers = s.cfg.Servers()
	}
	if err == nil && who(r).runID == "" {
		spec.Token = ""
	}
	return spec, err
}

func (s *runRoutes) runStatus(r *http.Request, rep api.StatusReport) (any, error) {
	if !rep.State.Valid() {
		return nil, badRequest("unknown state " + string(rep.State))
	}
	return s.cfg.Controller.Report(r.Context(), r.PathValue("id"), rep)
}

func (s *runRoutes) runHeartbeat(r *http.Request) (any, error) {
	reply, err := s.cfg.Controller.Heartbeat(r.Context(), r.PathValue("id"))
	if err == nil && s.cfg.Servers != nil {
		reply.Servers = s.cfg.Servers()
	}
	return reply, err
}

func (s *runRoutes) runLogs(r *http.Request, b api.LogBatch) (any, error) {
	if b.File == "" {
		b.File = StdLog
	}
	id := r.PathValue("id")
	acked, err := s.cfg.Controller.AppendLogs(r.Context(), id, b.File, b.Lines)
	return s.appended(id, len(b.Lines), s.tel.logLines, acked, err)
}

// appended answers a batch of n lines or points the controller appended to run id: it counts
// them in c and wakes the run's waiters.
func (s *runRoutes) appended(id string, n int, c prometheus.Counter, acked int64, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	c.Add(float64(n))
	s.hub.Changed(id)
	return api.Ack{Acked: acked}, nil
}

func (s *runRoutes) runMetrics(r *http.Request, b api.MetricBatch) (any, error) {
	id := r.PathValue("id")
	acked, err := s.cfg.Controller.AppendMetrics(r.Context(), id, b.Metrics)
	return s.appended(id, len(b.Metrics), s.tel.metricPts, acked, err)
}

func (s *runRoutes) runArtifacts(r *http.Request, rep api.ArtifactsReport) (any, error) {
	return s.cfg.Controller.RegisterArtifacts(r.Context(), r.PathValue("id"), rep)
}
