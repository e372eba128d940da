package server

import (
	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/component"
)

// componentRoutes are the component registry's routes (issue 15).
func (s *Server) componentRoutes(mux routes) {
	assetAPI[component.Version, api.CreateComponentRequest, api.ArchiveComponentRequest]{s: s,
		create: s.cfg.Controller.CreateComponent, resolve: s.cfg.Controller.ResolveComponent,
		setArchived: s.cfg.Controller.SetComponentArchived, versions: s.cfg.Store.Components}.routes(mux, "components")
}
