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
		setArchived: s.cfg.Controller.Workspace.Data.SetArchived, versions: s.cfg.Store.Assets.DataVersions}.routes(mux, "data")
	mux.handle("GET /api/datastores", readAccess, s.listDatastores)
	mux.handle("GET /api/datastores/{name}", readAccess, s.getDatastore)
	mux.handle("PUT /api/datastores/{name}", contributeAccess.audited("datastore.put"), s.putDatastore)
}

func (s *assetRoutes) listDatastores(w http.ResponseWriter, r *http.Request) {
	all, err := s.cfg.Controller.Workspace.Datastores.List(r.Context())
	s.respond(w, http.StatusOK, all, err)
}

func (s *assetRoutes) getDatastore(w http.ResponseWriter, r *http.Request) {
	d, err := s.cfg.Controller.Workspace.Datastores.Get(r.Context(), r.PathValue("name"))
	s.respond(w, http.StatusOK, d, err)
}

// putDatastore creates or replaces the datastore named in the path.
func (s *assetRoutes) putDatastore(w http.ResponseWriter, r *http.Request) {
	var d datastore.Datastore
	if err := readJSON(r, &d); err != nil {
		writeError(w, s.log, err)
		return
	}
	if d.Name != r.PathValue("name") {
		writeError(w, s.log, badRequest("name: the body names "+strconv.Quote(d.Name)+", the path "+strconv.Quote(r.PathValue("name"))))
		return
	}
	out, err := s.cfg.Controller.Workspace.Datastores.Create(r.Context(), d)
	s.respond(w, http.StatusOK, out, err)
}
