package server

import (
	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/component"
)

// componentRoutes are the component registry's routes (issue 15).
func (s *assetRoutes) componentRoutes(mux routes) {
	assetAPI[component.Version, api.CreateComponentRequest, api.ArchiveComponentRequest]{s: s.Server,
		create: s.cfg.Controller.Workspace.Components.Create, resolve: s.cfg.Controller.Workspace.Components.Resolve,
		setArchived: s.cfg.Controller.Workspace.Components.SetArchived, versions: s.cfg.Store.Assets.Components}.routes(mux, "components", "components.archive")
}
