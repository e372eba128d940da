package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/dataset"
)

// CreateConnectionRequest creates or replaces a workspace connection with its credentials
// (sealed by the server; no answer ever carries them).
type CreateConnectionRequest struct {
	Connection  connection.Connection  `json:"connection"`
	Credentials connection.Credentials `json:"credentials"`
}

// ConnectionCredentials is what an import run's supervisor gets of the connection its import
// reads: the target and the credentials' values.
type ConnectionCredentials struct {
	Name        string                 `json:"name"`
	Type        string                 `json:"type"`
	Target      string                 `json:"target"`
	Credentials connection.Credentials `json:"credentials"`
}

// DataImportRequest starts a data import (hangar data import -f).
type DataImportRequest struct {
	Spec dataset.ImportSpec `json:"spec"`
}

// ConnectionClient creates, lists, shows and deletes workspace connections.
type ConnectionClient struct{ client *Client }

// Create creates or replaces a connection.
func (c *ConnectionClient) Create(ctx context.Context, req CreateConnectionRequest) (*connection.Connection, error) {
	var out connection.Connection
	return &out, c.client.do(ctx, http.MethodPut, "/api/connections/"+url.PathEscape(req.Connection.Name), req, &out)
}

// List lists the connections.
func (c *ConnectionClient) List(ctx context.Context) ([]connection.Connection, error) {
	var out []connection.Connection
	return out, c.client.do(ctx, http.MethodGet, "/api/connections", nil, &out)
}

// Get shows one connection (never its credentials' values).
func (c *ConnectionClient) Get(ctx context.Context, name string) (*connection.Connection, error) {
	var out connection.Connection
	return &out, c.client.do(ctx, http.MethodGet, "/api/connections/"+url.PathEscape(name), nil, &out)
}

// Delete removes a connection.
func (c *ConnectionClient) Delete(ctx context.Context, name string) (*connection.Connection, error) {
	var out connection.Connection
	return &out, c.client.do(ctx, http.MethodDelete, "/api/connections/"+url.PathEscape(name), nil, &out)
}

// Import starts a data import: a run that reads the source and registers the version when it
// completes.
func (c *ConnectionClient) Import(ctx context.Context, req DataImportRequest) (*RunDetail, error) {
	var out RunDetail
	return &out, c.client.do(ctx, http.MethodPost, "/api/data-imports", req, &out)
}

// ConnectionCredentials is an import run's supervisor fetching its connection's credentials with
// its run token (answered only while the run is live).
func (c *RunClient) ConnectionCredentials(ctx context.Context, runID string) (*ConnectionCredentials, error) {
	var out ConnectionCredentials
	return &out, c.client.do(ctx, http.MethodGet, "/api/runs/"+url.PathEscape(runID)+"/connection-credentials", nil, &out)
}
