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
	mux.handle("DELETE /api/datastores/{name}", contributeAccess.audited("datastore.delete"), answer(s.Server, ok, s.deleteDatastore))
	mux.handle("GET /api/runs/{id}/datastore-credentials", runTokenAccess, s.runTokenOnly("its datastores' credentials",
		answer(s.Server, ok, s.runDatastoreCredentials)))
}

func (s *assetRoutes) listDatastores(r *http.Request) ([]datastore.Datastore, error) {
	return s.cfg.Controller.Workspace.Datastores.List(r.Context())
}

func (s *assetRoutes) getDatastore(r *http.Request) (*datastore.Datastore, error) {
	return s.cfg.Controller.Workspace.Datastores.Get(r.Context(), r.PathValue("name"))
}

// putDatastore creates or replaces the datastore named in the path, with its credentials; the
// answer is the datastore as show has it (its credentials' kind, never their values).
func (s *assetRoutes) putDatastore(r *http.Request, body api.PutDatastoreRequest) (*datastore.Datastore, error) {
	if body.Name != r.PathValue("name") {
		return nil, badRequest("name: the body names " + strconv.Quote(body.Name) + ", the path " + strconv.Quote(r.PathValue("name")))
	}
	return s.cfg.Controller.Workspace.Datastores.Create(r.Context(), body.Datastore, body.Credentials)
}

func (s *assetRoutes) deleteDatastore(r *http.Request) (*datastore.Datastore, error) {
	return s.cfg.Controller.Workspace.Datastores.Delete(r.Context(), r.PathValue("name"))
}

// runDatastoreCredentials answers a live run's own token: the credentials of the datastores its
// inputs and outputs name.
func (s *assetRoutes) runDatastoreCredentials(r *http.Request) (*api.RunDatastoreCredentials, error) {
	creds, err := s.cfg.Controller.Workspace.Datastores.CredentialsForRun(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &api.RunDatastoreCredentials{Datastores: creds}, nil
}
