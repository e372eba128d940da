package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/hangar-ml/hangar/internal/asset"
)

// routes registers models, data, environments (curated ones too) and components: every role
// reads them, those who submit create them.
func (s *assetRoutes) routes(_, api routes) {
	s.curatedRoutes(api)
	api.handle("POST /api/environments", contributeAccess, s.createEnvironment)
	api.handle("GET /api/environments", readAccess, s.listEnvironments)
	api.handle("GET /api/environments/{name}/versions/{version}", readAccess, s.getEnvironment)
	api.handle("POST /api/models", contributeAccess, s.createModel)
	api.handle("GET /api/models", readAccess, s.listModels)
	api.handle("GET /api/models/{name}/versions/{version}", readAccess, s.getModel)
	api.handle("POST /api/models/{name}/archive", contributeAccess.audited("model.archive"), s.archiveModel)
	api.handle("POST /api/models/{name}/restore", contributeAccess, s.restoreModel)
	s.dataRoutes(api)
	s.componentRoutes(api)
}

// archiveBody is the body of archive and restore: one version, or "" for every version.
type archiveBody = struct {
	Version string `json:"version,omitempty"`
}

// archiveRequest is each kind's archive request type. They stay distinct because a malformed
// body's error names the Go type it was read into.
type archiveRequest interface{ ~archiveBody }

// assetAPI serves one kind of versioned asset (models, data assets, components): create, list,
// get by version or @latest, archive and restore. The kind brings its controller and store
// calls; C is its create request and A its archive request.
type assetAPI[V asset.Versioned, C any, A archiveRequest] struct {
	s           *Server
	create      func(ctx context.Context, req C) (*V, error)
	resolve     func(ctx context.Context, ref string) (*V, error)
	setArchived func(ctx context.Context, name, version string, archived bool) error
	// versions are the stored versions of name, of every asset when name is "".
	versions func(ctx context.Context, name string) ([]V, error)
}

// routes adds the kind's routes under /api/<collection>.
func (a assetAPI[V, C, A]) routes(mux routes, collection string) {
	base := "/api/" + collection
	mux.handle("POST "+base, contributeAccess, a.createVersion)
	mux.handle("GET "+base, readAccess, a.list)
	mux.handle("GET "+base+"/{name}/versions/{version}", readAccess, a.get)
	mux.handle("POST "+base+"/{name}/archive", contributeAccess.audited(collection+".archive"), a.archive)
	mux.handle("POST "+base+"/{name}/restore", contributeAccess, a.restore)
}

func (a assetAPI[V, C, A]) createVersion(w http.ResponseWriter, r *http.Request) {
	var req C
	if err := readJSON(r, &req); err != nil {
		writeError(w, a.s.log, err)
		return
	}
	v, err := a.create(r.Context(), req)
	if err != nil {
		writeError(w, a.s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// list answers the latest version of each asset, or every version of ?name=; archived versions
// only with ?include_archived=true.
func (a assetAPI[V, C, A]) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	archived, err := strconv.ParseBool(q.Get("include_archived"))
	if err != nil && q.Get("include_archived") != "" {
		writeError(w, a.s.log, badRequest("include_archived: expected true or false"))
		return
	}
	all, err := a.versions(r.Context(), name)
	if err != nil {
		writeError(w, a.s.log, err)
		return
	}
	out := asset.Listing(all, name, archived)
	if out == nil {
		out = []V{} // an empty list is [], never null
	}
	writeJSON(w, http.StatusOK, out)
}

// get answers one version; "latest" in the path is @latest.
func (a assetAPI[V, C, A]) get(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("name") + ":" + r.PathValue("version")
	if r.PathValue("version") == "latest" {
		ref = r.PathValue("name") + "@latest"
	}
	v, err := a.resolve(r.Context(), ref)
	if err != nil {
		writeError(w, a.s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (a assetAPI[V, C, A]) archive(w http.ResponseWriter, r *http.Request) {
	a.setArchivedAnswer(w, r, true)
}

func (a assetAPI[V, C, A]) restore(w http.ResponseWriter, r *http.Request) {
	a.setArchivedAnswer(w, r, false)
}

// setArchivedAnswer answers every version of the asset as it is after the change.
func (a assetAPI[V, C, A]) setArchivedAnswer(w http.ResponseWriter, r *http.Request, archived bool) {
	var req A
	if err := readJSON(r, &req); err != nil {
		writeError(w, a.s.log, err)
		return
	}
	name := r.PathValue("name")
	if err := a.setArchived(r.Context(), name, archiveBody(req).Version, archived); err != nil {
		writeError(w, a.s.log, err)
		return
	}
	all, err := a.versions(r.Context(), name)
	if err != nil {
		writeError(w, a.s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, asset.Listing(all, name, true))
}
