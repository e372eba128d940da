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

func (s *assetRoutes) createEnvironment(w http.ResponseWriter, r *http.Request) {
	var env job.Environment
	if err := readJSON(r, &env); err != nil {
		writeError(w, s.log, err)
		return
	}
	ev, err := s.cfg.Controller.Workspace.Environments.Create(r.Context(), env)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, envView(*ev))
}

func (s *assetRoutes) listEnvironments(w http.ResponseWriter, r *http.Request) {
	evs, err := s.cfg.Store.Assets.Environments(r.Context(), r.URL.Query().Get("name"))
	s.respond(w, http.StatusOK, views(evs, envView), err)
}

func (s *assetRoutes) getEnvironment(w http.ResponseWriter, r *http.Request) {
	ev, err := s.cfg.Store.Assets.Environment(r.Context(), r.PathValue("name"), r.PathValue("version"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, envView(*ev))
}
