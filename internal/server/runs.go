package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
)

// The handlers below serve a run's supervisor.

func (s *Server) runSpec(w http.ResponseWriter, r *http.Request) {
	spec, err := s.cfg.Controller.RunSpec(r.Context(), r.PathValue("id"), r.URL.Query().Get("node"), s.cfg.URL())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, spec)
}

func (s *Server) runStatus(w http.ResponseWriter, r *http.Request) {
	var rep api.StatusReport
	if err := readJSON(r, &rep); err != nil {
		writeError(w, s.log, err)
		return
	}
	if !rep.State.Valid() {
		writeError(w, s.log, badRequest("unknown state "+string(rep.State)))
		return
	}
	reply, err := s.cfg.Controller.Report(r.Context(), r.PathValue("id"), rep)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

func (s *Server) runHeartbeat(w http.ResponseWriter, r *http.Request) {
	reply, err := s.cfg.Controller.Heartbeat(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

func (s *Server) runLogs(w http.ResponseWriter, r *http.Request) {
	var b api.LogBatch
	if err := readJSON(r, &b); err != nil {
		writeError(w, s.log, err)
		return
	}
	if b.File == "" {
		b.File = StdLog
	}
	id := r.PathValue("id")
	acked, err := s.cfg.Controller.AppendLogs(r.Context(), id, b.File, b.Lines)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	s.hub.notify(id)
	writeJSON(w, http.StatusOK, api.Ack{Acked: acked})
}

func (s *Server) runMetrics(w http.ResponseWriter, r *http.Request) {
	var b api.MetricBatch
	if err := readJSON(r, &b); err != nil {
		writeError(w, s.log, err)
		return
	}
	id := r.PathValue("id")
	acked, err := s.cfg.Controller.AppendMetrics(r.Context(), id, b.Metrics)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	s.hub.notify(id)
	writeJSON(w, http.StatusOK, api.Ack{Acked: acked})
}

func (s *Server) runArtifacts(w http.ResponseWriter, r *http.Request) {
	var rep api.ArtifactsReport
	if err := readJSON(r, &rep); err != nil {
		writeError(w, s.log, err)
		return
	}
	reply, err := s.cfg.Controller.RegisterArtifacts(r.Context(), r.PathValue("id"), rep)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, reply)
}
