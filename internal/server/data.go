package server

import (
	"net/http"
	"strconv"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// dataRoutes adds the data asset and datastore routes (issue 15), admin only like models.
func (s *Server) dataRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/data", adminOnly(s.createData))
	mux.HandleFunc("GET /api/data", adminOnly(s.listData))
	mux.HandleFunc("GET /api/data/{name}/versions/{version}", adminOnly(s.getData))
	mux.HandleFunc("POST /api/data/{name}/archive", adminOnly(func(w http.ResponseWriter, r *http.Request) { s.setDataArchived(w, r, true) }))
	mux.HandleFunc("POST /api/data/{name}/restore", adminOnly(func(w http.ResponseWriter, r *http.Request) { s.setDataArchived(w, r, false) }))
	mux.HandleFunc("GET /api/datastores", adminOnly(s.listDatastores))
	mux.HandleFunc("GET /api/datastores/{name}", adminOnly(s.getDatastore))
	mux.HandleFunc("PUT /api/datastores/{name}", adminOnly(s.putDatastore))
}

func (s *Server) createData(w http.ResponseWriter, r *http.Request) {
	var req api.CreateDataRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	v, err := s.cfg.Controller.CreateData(r.Context(), req)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// listData answers the latest version of each data asset, or every version of ?name=; archived
// versions only with ?include_archived=true.
func (s *Server) listData(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	archived, err := strconv.ParseBool(q.Get("include_archived"))
	if err != nil && q.Get("include_archived") != "" {
		writeError(w, s.log, badRequest("include_archived: expected true or false"))
		return
	}
	all, err := s.cfg.Store.DataVersions(r.Context(), name)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	out := asset.Listing(all, name, archived)
	if out == nil {
		out = []dataset.Version{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getData(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("name") + ":" + r.PathValue("version")
	if r.PathValue("version") == "latest" {
		ref = r.PathValue("name") + "@latest"
	}
	v, err := s.cfg.Controller.ResolveData(r.Context(), ref)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// setDataArchived answers every version of the data asset as it is after the change.
func (s *Server) setDataArchived(w http.ResponseWriter, r *http.Request, archived bool) {
	var req api.ArchiveDataRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	name := r.PathValue("name")
	if err := s.cfg.Controller.SetDataArchived(r.Context(), name, req.Version, archived); err != nil {
		writeError(w, s.log, err)
		return
	}
	all, err := s.cfg.Store.DataVersions(r.Context(), name)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, asset.Listing(all, name, true))
}

func (s *Server) listDatastores(w http.ResponseWriter, r *http.Request) {
	all, err := s.cfg.Controller.Datastores(r.Context())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, all)
}

func (s *Server) getDatastore(w http.ResponseWriter, r *http.Request) {
	d, err := s.cfg.Controller.Datastore(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// putDatastore creates or replaces the datastore named in the path.
func (s *Server) putDatastore(w http.ResponseWriter, r *http.Request) {
	var d datastore.Datastore
	if err := readJSON(r, &d); err != nil {
		writeError(w, s.log, err)
		return
	}
	if d.Name != r.PathValue("name") {
		writeError(w, s.log, badRequest("name: the body names "+strconv.Quote(d.Name)+", the path "+strconv.Quote(r.PathValue("name"))))
		return
	}
	out, err := s.cfg.Controller.CreateDatastore(r.Context(), d)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
