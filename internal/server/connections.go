package server

import (
	"net/http"
	"strconv"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/job"
)

// connectionRoutes adds workspace connections and data imports (docs/data.md "Connections and
// data import"). No route answers a connection's credentials to a user: they go in through PUT
// and come out only to a live import run's own token (secretRoutes' connection-credentials).
func (s *assetRoutes) connectionRoutes(mux routes) {
	ok := http.StatusOK
	mux.handle("GET /api/connections", readAccess, answer(s.Server, ok, s.listConnections))
	mux.handle("GET /api/connections/{name}", readAccess, answer(s.Server, ok, s.getConnection))
	mux.handle("PUT /api/connections/{name}", contributeAccess.audited("connection.put"), answerBody(s.Server, ok, s.putConnection))
	mux.handle("DELETE /api/connections/{name}", contributeAccess.audited("connection.delete"), answer(s.Server, ok, s.deleteConnection))
	mux.handle("POST /api/data-imports", contributeAccess, answerBody(s.Server, http.StatusCreated, s.importData))
}

func (s *assetRoutes) listConnections(r *http.Request) ([]connection.Connection, error) {
	return s.cfg.Controller.Workspace.Connections.List(r.Context())
}

func (s *assetRoutes) getConnection(r *http.Request) (*connection.Connection, error) {
	return s.cfg.Controller.Workspace.Connections.Get(r.Context(), r.PathValue("name"))
}

// putConnection creates or replaces the connection named in the path.
func (s *assetRoutes) putConnection(r *http.Request, req api.CreateConnectionRequest) (*connection.Connection, error) {
	if req.Connection.Name != r.PathValue("name") {
		return nil, badRequest("name: the body names " + strconv.Quote(req.Connection.Name) + ", the path " + strconv.Quote(r.PathValue("name")))
	}
	return s.cfg.Controller.Workspace.Connections.Create(r.Context(), req)
}

func (s *assetRoutes) deleteConnection(r *http.Request) (*connection.Connection, error) {
	return s.cfg.Controller.Workspace.Connections.Delete(r.Context(), r.PathValue("name"))
}

// importData queues a data import's run and answers it as job create does.
func (s *assetRoutes) importData(r *http.Request, req api.DataImportRequest) (*api.RunDetail, error) {
	var sp job.Spec
	stampSubmitter(who(r), &sp) // users.go: the run is the caller's, as a job they create
	run, err := s.cfg.Controller.Imports.Create(r.Context(), req, sp.Properties)
	return s.groups.jobs.detailOf(r, run, err)
}
