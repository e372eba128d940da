package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

// modelAliasRoutes are models' aliases (hangar model alias): set and delete by an owner or
// contributor, read by every role. Moving an alias rolls the deployments that follow it.
func (s *assetRoutes) modelAliasRoutes(mux routes) {
	const p = "/api/models/{name}/aliases"
	mux.handle("GET "+p, readAccess, answer(s.Server, http.StatusOK, s.listModelAliases))
	mux.handle("PUT "+p+"/{alias}", contributeAccess, answerBody(s.Server, http.StatusOK, s.setModelAlias))
	mux.handle("DELETE "+p+"/{alias}", contributeAccess, noContent(s.Server, s.deleteModelAlias))
}

func (s *assetRoutes) setModelAlias(r *http.Request, req api.SetModelAliasRequest) (*model.Version, error) {
	return s.cfg.Controller.Workspace.Models.SetAlias(r.Context(), r.PathValue("name"), r.PathValue("alias"), req.Version)
}

func (s *assetRoutes) deleteModelAlias(r *http.Request) error {
	return s.cfg.Controller.Workspace.Models.DeleteAlias(r.Context(), r.PathValue("name"), r.PathValue("alias"))
}

func (s *assetRoutes) listModelAliases(r *http.Request) ([]api.ModelAlias, error) {
	all, err := s.cfg.Store.Assets.ModelAliases(r.Context(), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	out := make([]api.ModelAlias, 0, len(all))
	for _, a := range all {
		out = append(out, api.ModelAlias{Alias: a.Alias, Version: a.Version})
	}
	return out, nil
}
