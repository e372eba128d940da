package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/curated"
)

// curatedRoutes are the mappings of Azure's curated environments: every role reads them (a job's
// warning names them), owners change them (what jobs that name a curated environment run in).
func (s *assetRoutes) curatedRoutes(rt routes) {
	ok := http.StatusOK
	rt.handle("GET /api/settings/curated-environments", readAccess, answer(s.Server, ok, s.listCurated))
	rt.handle("PUT /api/settings/curated-environments/{name}", ownerAccess.audited("curated-environment.set"), answerBody(s.Server, ok, s.putCurated))
	rt.handle("DELETE /api/settings/curated-environments/{name}", ownerAccess.audited("curated-environment.remove"), answer(s.Server, ok, s.deleteCurated))
}

func (s *assetRoutes) listCurated(r *http.Request) ([]api.CuratedEnvironment, error) {
	ms, err := s.cfg.Controller.Workspace.Environments.Curated(r.Context())
	return views(ms, curatedView), err
}

func (s *assetRoutes) putCurated(r *http.Request, body api.CuratedEnvironment) (api.CuratedEnvironment, error) {
	if body.Name != "" && body.Name != r.PathValue("name") {
		return api.CuratedEnvironment{}, badRequest("name in the body differs from the path")
	}
	m, err := s.cfg.Controller.Workspace.Environments.SetCurated(r.Context(), curated.Mapping{Name: r.PathValue("name"),
		Environment: body.Environment, Description: body.Description})
	return viewed(m, err, curatedView)
}

func (s *assetRoutes) deleteCurated(r *http.Request) (api.CuratedEnvironment, error) {
	m, err := s.cfg.Controller.Workspace.Environments.RemoveCurated(r.Context(), r.PathValue("name"))
	return viewed(m, err, curatedView)
}

func curatedView(m curated.Mapping) api.CuratedEnvironment {
	v := api.CuratedEnvironment{Name: m.Name, Environment: m.Environment, Description: m.Description,
		Builtin: m.Builtin, Removed: m.Removed}
	if !m.Removed {
		v.RunsIn = curated.RunsIn(m.Environment)
	}
	return v
}
