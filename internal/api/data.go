package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// CreateDataRequest registers a data asset version. Manifest is set when the client uploaded the
// files at Spec.Path (a local path, then only shown); otherwise Spec.Path is a URI.
type CreateDataRequest struct {
	Spec     dataset.Spec `json:"spec"`
	Manifest string       `json:"manifest,omitempty"`
}

// ArchiveDataRequest archives or restores one version ("" = every version of the data asset).
type ArchiveDataRequest struct {
	Version string `json:"version,omitempty"`
}

// Create registers a data asset version.
func (c *DataClient) Create(ctx context.Context, req CreateDataRequest) (*dataset.Version, error) {
	var out dataset.Version
	return &out, c.do(ctx, http.MethodPost, "/api/data", req, &out)
}

// List lists the latest version of each data asset, or every version of one (name).
func (c *DataClient) List(ctx context.Context, name string, includeArchived bool) ([]dataset.Version, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if includeArchived {
		q.Set("include_archived", "true")
	}
	var out []dataset.Version
	return out, c.do(ctx, http.MethodGet, "/api/data?"+q.Encode(), nil, &out)
}

// Get shows one version ("latest" = the highest one not archived).
func (c *DataClient) Get(ctx context.Context, name, version string) (*dataset.Version, error) {
	var out dataset.Version
	return &out, c.do(ctx, http.MethodGet, "/api/data/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil, &out)
}

// Archive archives (or, with archived false, restores) a version or every version, and
// returns every version of the data asset as they are now.
func (c *DataClient) Archive(ctx context.Context, name, version string, archived bool) ([]dataset.Version, error) {
	verb := "archive"
	if !archived {
		verb = "restore"
	}
	var out []dataset.Version
	return out, c.do(ctx, http.MethodPost, "/api/data/"+url.PathEscape(name)+"/"+verb, ArchiveDataRequest{Version: version}, &out)
}

// Create creates or replaces a datastore.
func (c *DatastoreClient) Create(ctx context.Context, d datastore.Datastore) (*datastore.Datastore, error) {
	var out datastore.Datastore
	return &out, c.do(ctx, http.MethodPut, "/api/datastores/"+url.PathEscape(d.Name), d, &out)
}

// List lists the datastores, workspaceblobstore first.
func (c *DatastoreClient) List(ctx context.Context) ([]datastore.Datastore, error) {
	var out []datastore.Datastore
	return out, c.do(ctx, http.MethodGet, "/api/datastores", nil, &out)
}

// Get shows one datastore.
func (c *DatastoreClient) Get(ctx context.Context, name string) (*datastore.Datastore, error) {
	var out datastore.Datastore
	return &out, c.do(ctx, http.MethodGet, "/api/datastores/"+url.PathEscape(name), nil, &out)
}
