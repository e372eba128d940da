package server

import (
	"net/http"
	"strconv"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/component"
)

// componentRoutes are the component registry's routes (issue 15).
func (s *Server) componentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/components", adminOnly(s.createComponent))
	mux.HandleFunc("GET /api/components", adminOnly(s.listComponents))
	mux.HandleFunc("GET /api/components/{name}/versions/{version}", adminOnly(s.getComponent))
	mux.HandleFunc("POST /api/components/{name}/archive", adminOnly(func(w http.ResponseWriter, r *http.Request) { s.setComponentArchived(w, r, true) }))
	mux.HandleFunc("POST /api/components/{name}/restore", adminOnly(func(w http.ResponseWriter, r *http.Request) { s.setComponentArchived(w, r, false) }))
}

func (s *Server) createComponent(w http.ResponseWriter, r *http.Request) {
	var req api.CreateComponentRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	v, err := s.cfg.Controller.CreateComponent(r.Context(), req)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// listComponents answers the latest version of each component, or every version of ?name=;
// archived versions only with ?include_archived=true.
func (s *Server) listComponents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	archived, err := strconv.ParseBool(q.Get("include_archived"))
	if err != nil && q.Get("include_archived") != "" {
		writeError(w, s.log, badRequest("include_archived: expected true or false"))
		return
	}
	all, err := s.cfg.Store.Components(r.Context(), name)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	out := component.Listing(all, name, archived)
	if out == nil {
		out = []component.Version{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getComponent(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("name") + ":" + r.PathValue("version")
	if r.PathValue("version") == "latest" {
		ref = r.PathValue("name") + "@latest"
	}
	v, err := s.cfg.Controller.ResolveComponent(r.Context(), ref)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// setComponentArchived answers every version of the component as it is after the change.
func (s *Server) setComponentArchived(w http.ResponseWriter, r *http.Request, archived bool) {
	var req api.ArchiveComponentRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	name := r.PathValue("name")
	if err := s.cfg.Controller.SetComponentArchived(r.Context(), name, req.Version, archived); err != nil {
		writeError(w, s.log, err)
		return
	}
	all, err := s.cfg.Store.Components(r.Context(), name)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, component.Listing(all, name, true))
}
