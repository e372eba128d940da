package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/curated"
)

// curatedRoutes are the mappings of Azure's curated environments: every role reads them (a job's
// warning names them), owners change them (what jobs that name a curated environment run in).
func (s *assetRoutes) curatedRoutes(rt routes) {
	rt.handle("GET /api/settings/curated-environments", readAccess, s.listCurated)
	rt.handle("PUT /api/settings/curated-environments/{name}", ownerAccess.audited("curated-environment.set"), s.putCurated)
	rt.handle("DELETE /api/settings/curated-environments/{name}", ownerAccess.audited("curated-environment.remove"), s.deleteCurated)
}

func (s *assetRoutes) listCurated(w http.ResponseWriter, r *http.Request) {
	ms, err := s.cfg.Controller.Workspace.Environments.Curated(r.Context())
	s.respond(w, http.StatusOK, views(ms, curatedView), err)
}

func (s *assetRoutes) putCurated(w http.ResponseWriter, r *http.Request) {
	var body api.CuratedEnvironment
	if err := readJSON(r, &body); err != nil {
		writeError(w, s.log, err)
		return
	}
	if body.Name != "" && body.Name != r.PathValue("name") {
		writeError(w, s.log, badRequest("name in the body differs from the path"))
		return
	}
	m, err := s.cfg.Controller.Workspace.Environments.SetCurated(r.Context(), curated.Mapping{Name: r.PathValue("name"),
		Environment: body.Environment, Description: body.Description})
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, curatedView(*m))
}

func (s *assetRoutes) deleteCurated(w http.ResponseWriter, r *http.Request) {
	m, err := s.cfg.Controller.Workspace.Environments.RemoveCurated(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, curatedView(*m))
}

func curatedView(m curated.Mapping) api.CuratedEnvironment {
	v := api.CuratedEnvironment{Name: m.Name, Environment: m.Environment, Description: m.Description,
		Builtin: m.Builtin, Removed: m.Removed}
	if !m.Removed {
		v.RunsIn = curated.RunsIn(m.Environment)
	}
	return v
}
