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

// ArchiveDataRequest is the archive request of data assets (ArchiveVersionRequest).
type ArchiveDataRequest = ArchiveVersionRequest

// DataClient registers, lists, shows and archives data asset versions.
type DataClient = VersionClient[dataset.Version, CreateDataRequest]

// Create creates or replaces a datastore.
func (c *DatastoreClient) Create(ctx context.Context, d datastore.Datastore) (*datastore.Datastore, error) {
	var out datastore.Datastore
	return &out, c.client.do(ctx, http.MethodPut, "/api/datastores/"+url.PathEscape(d.Name), d, &out)
}

// List lists the datastores, workspaceblobstore first.
func (c *DatastoreClient) List(ctx context.Context) ([]datastore.Datastore, error) {
	var out []datastore.Datastore
	return out, c.client.do(ctx, http.MethodGet, "/api/datastores", nil, &out)
}

// Get shows one datastore.
func (c *DatastoreClient) Get(ctx context.Context, name string) (*datastore.Datastore, error) {
	var out datastore.Datastore
	return &out, c.client.do(ctx, http.MethodGet, "/api/datastores/"+url.PathEscape(name), nil, &out)
}
