package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/asset"
)

// routes registers models, data, environments (curated ones too) and components: every role
// reads them, those who submit create them.
func (s *assetRoutes) routes(_, api routes) {
	s.curatedRoutes(api)
	s.environmentRoutes(api)
	s.modelRoutes(api)
	s.modelAliasRoutes(api)
	s.dataRoutes(api)
	s.connectionRoutes(api)
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

// routes adds the kind's routes under /api/<collection>; an answered archive is recorded in the
// audit log as archiveAction.
func (a assetAPI[V, C, A]) routes(mux routes, collection, archiveAction string) {
	base := "/api/" + collection
	mux.handle("POST "+base, contributeAccess, answerBody(a.s, http.StatusCreated, a.createVersion))
	mux.handle("GET "+base, readAccess, answer(a.s, http.StatusOK, a.list))
	mux.handle("GET "+base+"/{name}/versions/{version}", readAccess, answer(a.s, http.StatusOK, a.get))
	mux.handle("POST "+base+"/{name}/archive", contributeAccess.audited(archiveAction), answerBody(a.s, http.StatusOK, a.setArchivedAnswer(true)))
	mux.handle("POST "+base+"/{name}/restore", contributeAccess, answerBody(a.s, http.StatusOK, a.setArchivedAnswer(false)))
}

func (a assetAPI[V, C, A]) createVersion(r *http.Request, req C) (*V, error) {
	return a.create(r.Context(), req)
}

// list answers the latest version of each asset, or every version of ?name=; archived versions
// only with ?include_archived=true.
func (a assetAPI[V, C, A]) list(r *http.Request) ([]V, error) {
	q := r.URL.Query()
	name := q.Get("name")
	archived, err := strconv.ParseBool(q.Get("include_archived"))
	if err != nil && q.Get("include_archived") != "" {
		return nil, badRequest("include_archived: expected true or false")
	}
	all, err := a.versions(r.Context(), name)
	if err != nil {
		return nil, err
	}
	out := asset.Listing(all, name, archived)
	if out == nil {
		out = []V{} // an empty list is [], never null
	}
	return out, nil
}

// get answers one version; "latest" in the path is @latest, and @<alias> the version a model's
// alias names.
func (a assetAPI[V, C, A]) get(r *http.Request) (*V, error) {
	ref := r.PathValue("name") + ":" + r.PathValue("version")
	switch v := r.PathValue("version"); {
	case v == "latest":
		ref = r.PathValue("name") + "@latest"
	case strings.HasPrefix(v, "@"):
		ref = r.PathValue("name") + v
	}
	return a.resolve(r.Context(), ref)
}

// setArchivedAnswer archives (or restores) what the request names, and answers every version
// of the asset as it is after the change.
func (a assetAPI[V, C, A]) setArchivedAnswer(archived bool) func(r *http.Request, req A) ([]V, error) {
	return func(r *http.Request, req A) ([]V, error) {
		name := r.PathValue("name")
		if err := a.setArchived(r.Context(), name, archiveBody(req).Version, archived); err != nil {
			return nil, err
		}
		all, err := a.versions(r.Context(), name)
		if err != nil {
			return nil, err
		}
		return asset.Listing(all, name, true), nil
	}
}
