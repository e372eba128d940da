package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

// modelAPI serves the model registry; server.go registers its handlers by name.
func (s *assetRoutes) modelAPI() assetAPI[model.Version, api.CreateModelRequest, api.ArchiveModelRequest] {
	return assetAPI[model.Version, api.CreateModelRequest, api.ArchiveModelRequest]{s: s.Server,
		create: s.cfg.Controller.Workspace.Models.Create, resolve: s.cfg.Controller.Workspace.Models.Resolve,
		setArchived: s.cfg.Controller.Workspace.Models.SetArchived, versions: s.cfg.Store.Assets.Models}
}

func (s *assetRoutes) createModel(w http.ResponseWriter, r *http.Request) {
	s.modelAPI().createVersion(w, r)
}
func (s *assetRoutes) listModels(w http.ResponseWriter, r *http.Request) {
	s.modelAPI().list(w, r)
}
func (s *assetRoutes) getModel(w http.ResponseWriter, r *http.Request) { s.modelAPI().get(w, r) }
func (s *assetRoutes) archiveModel(w http.ResponseWriter, r *http.Request) {
	s.modelAPI().archive(w, r)
}
func (s *assetRoutes) restoreModel(w http.ResponseWriter, r *http.Request) {
	s.modelAPI().restore(w, r)
}
