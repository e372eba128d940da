package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

func envView(e store.EnvironmentVersion) api.EnvironmentVersion {
	return api.EnvironmentVersion{Name: e.Name, Version: e.Version, Spec: e.Spec, CreatedAt: e.CreatedAt}
}

// environmentRoutes are the registered environments' routes: every role reads them, those who
// submit register them.
func (s *assetRoutes) environmentRoutes(mux routes) {
	mux.handle("POST /api/environments", contributeAccess, answerBody(s.Server, http.StatusCreated, s.createEnvironment))
	mux.handle("GET /api/environments", readAccess, answer(s.Server, http.StatusOK, s.listEnvironments))
	mux.handle("GET /api/environments/{name}/versions/{version}", readAccess, answer(s.Server, http.StatusOK, s.getEnvironment))
}

func (s *assetRoutes) createEnvironment(r *http.Request, env job.Environment) (api.EnvironmentVersion, error) {
	ev, err := s.cfg.Controller.Workspace.Environments.Create(r.Context(), env)
	return viewed(ev, err, envView)
}

func (s *assetRoutes) listEnvironments(r *http.Request) ([]api.EnvironmentVersion, error) {
	evs, err := s.cfg.Store.Assets.Environments(r.Context(), r.URL.Query().Get("name"))
	return views(evs, envView), err
}

func (s *assetRoutes) getEnvironment(r *http.Request) (api.EnvironmentVersion, error) {
	ev, err := s.cfg.Store.Assets.Environment(r.Context(), r.PathValue("name"), r.PathValue("version"))
	return viewed(ev, err, envView)
}
