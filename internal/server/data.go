package server

import (
	"net/http"
	"strconv"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// dataRoutes adds the data asset and datastore routes (issue 15), admin only like models.
func (s *assetRoutes) dataRoutes(mux routes) {
	assetAPI[dataset.Version, api.CreateDataRequest, api.ArchiveDataRequest]{s: s.Server,
		create: s.cfg.Controller.Workspace.Data.Create, resolve: s.cfg.Controller.Workspace.Data.Resolve,
		setArchived: s.cfg.Controller.Workspace.Data.SetArchived, versions: s.cfg.Store.Assets.DataVersions}.routes(mux, "data", "data.archive")
	ok := http.StatusOK
	mux.handle("GET /api/datastores", readAccess, answer(s.Server, ok, s.listDatastores))
	mux.handle("GET /api/datastores/{name}", readAccess, answer(s.Server, ok, s.getDatastore))
	mux.handle("PUT /api/datastores/{name}", contributeAccess.audited("datastore.put"), answerBody(s.Server, ok, s.putDatastore))
}

func (s *assetRoutes) listDatastores(r *http.Request) ([]datastore.Datastore, error) {
	return s.cfg.Controller.Workspace.Datastores.List(r.Context())
}

func (s *assetRoutes) getDatastore(r *http.Request) (*datastore.Datastore, error) {
	return s.cfg.Controller.Workspace.Datastores.Get(r.Context(), r.PathValue("name"))
}

// putDatastore creates or replaces the datastore named in the path.
func (s *assetRoutes) putDatastore(r *http.Request, d datastore.Datastore) (*datastore.Datastore, error) {
	if d.Name != r.PathValue("name") {
		return nil, badRequest("name: the body names " + strconv.Quote(d.Name) + ", the path " + strconv.Quote(r.PathValue("name")))
	}
	return s.cfg.Controller.Workspace.Datastores.Create(r.Context(), d)
}
