package server

import (
	"net/http"
	"strconv"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

func (s *Server) createModel(w http.ResponseWriter, r *http.Request) {
	var req api.CreateModelRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	v, err := s.cfg.Controller.CreateModel(r.Context(), req)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// listModels answers the latest version of each model, or every version of ?name=; archived
// versions only with ?include_archived=true.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	archived, err := strconv.ParseBool(q.Get("include_archived"))
	if err != nil && q.Get("include_archived") != "" {
		writeError(w, s.log, badRequest("include_archived: expected true or false"))
		return
	}
	all, err := s.cfg.Store.Models(r.Context(), name)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	out := model.Listing(all, name, archived)
	if out == nil {
		out = []model.Version{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getModel(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("name") + ":" + r.PathValue("version")
	if r.PathValue("version") == "latest" {
		ref = r.PathValue("name") + "@latest"
	}
	v, err := s.cfg.Controller.ResolveModel(r.Context(), ref)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) archiveModel(w http.ResponseWriter, r *http.Request) { s.setModelArchived(w, r, true) }
func (s *Server) restoreModel(w http.ResponseWriter, r *http.Request) {
	s.setModelArchived(w, r, false)
}

// setModelArchived answers every version of the model as it is after the change.
func (s *Server) setModelArchived(w http.ResponseWriter, r *http.Request, archived bool) {
	var req api.ArchiveModelRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	name := r.PathValue("name")
	if err := s.cfg.Controller.SetModelArchived(r.Context(), name, req.Version, archived); err != nil {
		writeError(w, s.log, err)
		return
	}
	all, err := s.cfg.Store.Models(r.Context(), name)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, model.Listing(all, name, true))
}
