package server

import (
	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/component"
)

// componentRoutes are the component registry's routes (issue 15).
func (s *assetRoutes) componentRoutes(mux routes) {
	assetAPI[component.Version, api.CreateComponentRequest, api.ArchiveComponentRequest]{s: s.Server,
		create: s.cfg.Controller.Workspace.CreateComponent, resolve: s.cfg.Controller.Workspace.ResolveComponent,
		setArchived: s.cfg.Controller.Workspace.SetComponentArchived, versions: s.cfg.Store.Components}.routes(mux, "components")
}
