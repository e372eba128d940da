package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

// modelRoutes are the model registry's routes.
func (s *assetRoutes) modelRoutes(mux routes) {
	assetAPI[model.Version, api.CreateModelRequest, api.ArchiveModelRequest]{s: s.Server,
		create: s.cfg.Controller.Workspace.Models.Create, resolve: s.cfg.Controller.Workspace.Models.Resolve,
		setArchived: s.cfg.Controller.Workspace.Models.SetArchived, versions: s.cfg.Store.Assets.Models}.routes(mux, "models", "model.archive")
	mux.handle("GET /api/jobs/{name}/models", readAccess, answer(s.Server, http.StatusOK, s.runModels))
	mux.handle("GET /api/models/{name}/lineage", readAccess, answer(s.Server, http.StatusOK, s.modelLineages))
	mux.handle("GET /api/models/{name}/versions/{version}/lineage", readAccess, answer(s.Server, http.StatusOK, s.modelLineage))
}
