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

// PutDatastoreRequest creates or replaces a datastore: its fields, and its credentials (nil or
// none: the node's ambient identity). The credentials go in only; no answer carries them.
type PutDatastoreRequest struct {
	datastore.Datastore
	Credentials *datastore.Credentials `json:"credentials,omitempty"`
}

// RunDatastoreCredentials is what a live run's supervisor gets: the credentials of each
// datastore its inputs and outputs name (an empty value: the node's ambient identity).
type RunDatastoreCredentials struct {
	Datastores map[string]datastore.Credentials `json:"datastores"`
}

// Create creates or replaces a datastore with its credentials (nil: none, the node's identity).
func (c *DatastoreClient) Create(ctx context.Context, d datastore.Datastore, creds *datastore.Credentials) (*datastore.Datastore, error) {
	return call[datastore.Datastore](ctx, c.client, http.MethodPut, "/api/datastores/"+url.PathEscape(d.Name),
		PutDatastoreRequest{Datastore: d, Credentials: creds})
}

// Delete removes a datastore and its credentials.
func (c *DatastoreClient) Delete(ctx context.Context, name string) (*datastore.Datastore, error) {
	return call[datastore.Datastore](ctx, c.client, http.MethodDelete, "/api/datastores/"+url.PathEscape(name), nil)
}

// DatastoreCredentials fetches, with a run token, the credentials of the datastores the run's
// inputs and outputs name, while the run is live.
func (c *RunClient) DatastoreCredentials(ctx context.Context, runID string) (map[string]datastore.Credentials, error) {
	out, err := call[RunDatastoreCredentials](ctx, c.client, http.MethodGet, "/api/runs/"+url.PathEscape(runID)+"/datastore-credentials", nil)
	if err != nil {
		return nil, err
	}
	return out.Datastores, nil
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
