package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

// modelRoutes are the model registry's routes: the versioned assets' (create, list, get,
// archive, restore), and delete (a version, or the whole model), which the workspace's
// registry makes a tombstone.
func (s *assetRoutes) modelRoutes(mux routes) {
	ws := s.cfg.Controller.Workspace.Models
	assetAPI[model.Version, api.CreateModelRequest, api.ArchiveModelRequest]{s: s.Server,
		create: ws.Create, resolve: ws.Resolve,
		setArchived: ws.SetArchived, versions: s.cfg.Store.Assets.Models}.routes(mux, "models", "model.archive")
	del := contributeAccess.audited("model.delete")
	mux.handle("DELETE /api/models/{name}", del, noContent(s.Server, func(r *http.Request) error {
		return ws.Delete(r.Context(), r.PathValue("name"), "")
	}))
	mux.handle("DELETE /api/models/{name}/versions/{version}", del, noContent(s.Server, func(r *http.Request) error {
		return ws.Delete(r.Context(), r.PathValue("name"), r.PathValue("version"))
	}))
	mux.handle("GET /api/jobs/{name}/models", readAccess, answer(s.Server, http.StatusOK, s.runModels))
	mux.handle("GET /api/models/{name}/lineage", readAccess, answer(s.Server, http.StatusOK, s.modelLineages))
	mux.handle("GET /api/models/{name}/versions/{version}/lineage", readAccess, answer(s.Server, http.StatusOK, s.modelLineage))
}
