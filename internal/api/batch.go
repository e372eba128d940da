package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
)

// BatchEndpointView is a batch endpoint as the API shows it.
type BatchEndpointView struct {
	serving.BatchEndpoint
	ProvisioningState string    `json:"provisioning_state"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// BatchDeploymentView is a batch deployment as the API shows it.
type BatchDeploymentView struct {
	serving.BatchDeployment
	ProvisioningState string    `json:"provisioning_state"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// BatchInvokeRequest is POST /api/batch-endpoints/{name}/invoke: the input scored (a
// uri_folder or uri_file, uploaded or a URI; or the one data input of Inputs, as Azure's
// invocation file names it), the deployment ("" : the default), and what this job alone
// changes of the deployment (its overrides and the output score's path).
type BatchInvokeRequest struct {
	Deployment string    `json:"deployment_name,omitempty"`
	Input      job.Input `json:"input,omitzero"`
	serving.BatchInvocation
}

func batchEndpointPath(name string) string {
	return "/api/batch-endpoints/" + url.PathEscape(name)
}

func batchDeploymentPath(endpoint, name string) string {
	return batchEndpointPath(endpoint) + "/deployments/" + url.PathEscape(name)
}

// Create creates a batch endpoint.
func (c *BatchEndpointClient) Create(ctx context.Context, e serving.BatchEndpoint) (*BatchEndpointView, error) {
	return call[BatchEndpointView](ctx, c.client, http.MethodPost, "/api/batch-endpoints", e)
}

// Update replaces a batch endpoint's definition.
func (c *BatchEndpointClient) Update(ctx context.Context, e serving.BatchEndpoint) (*BatchEndpointView, error) {
	return call[BatchEndpointView](ctx, c.client, http.MethodPut, batchEndpointPath(e.Name), e)
}

// Get reads a batch endpoint.
func (c *BatchEndpointClient) Get(ctx context.Context, name string) (*BatchEndpointView, error) {
	return call[BatchEndpointView](ctx, c.client, http.MethodGet, batchEndpointPath(name), nil)
}

// List lists the batch endpoints.
func (c *BatchEndpointClient) List(ctx context.Context) ([]BatchEndpointView, error) {
	return callValue[[]BatchEndpointView](ctx, c.client, http.MethodGet, "/api/batch-endpoints", nil)
}

// Delete deletes a batch endpoint and its deployments.
func (c *BatchEndpointClient) Delete(ctx context.Context, name string) error {
	return c.client.do(ctx, http.MethodDelete, batchEndpointPath(name), nil, nil)
}

// Invoke queues a batch scoring job.
func (c *BatchEndpointClient) Invoke(ctx context.Context, endpoint string, req BatchInvokeRequest) (*RunDetail, error) {
	return call[RunDetail](ctx, c.client, http.MethodPost, batchEndpointPath(endpoint)+"/invoke", req)
}

// Put creates (create) or replaces a batch deployment; setDefault makes it its
// endpoint's default.
func (c *BatchDeploymentClient) Put(ctx context.Context, d serving.BatchDeployment, create, setDefault bool) (*BatchDeploymentView, error) {
	method, p := http.MethodPut, batchDeploymentPath(d.Endpoint, d.Name)
	if create {
		method, p = http.MethodPost, batchEndpointPath(d.Endpoint)+"/deployments"
	}
	return call[BatchDeploymentView](ctx, c.client, method, p+"?set_default="+strconv.FormatBool(setDefault), d)
}

// Get reads a batch deployment.
func (c *BatchDeploymentClient) Get(ctx context.Context, endpoint, name string) (*BatchDeploymentView, error) {
	return call[BatchDeploymentView](ctx, c.client, http.MethodGet, batchDeploymentPath(endpoint, name), nil)
}

// List lists a batch endpoint's deployments.
func (c *BatchDeploymentClient) List(ctx context.Context, endpoint string) ([]BatchDeploymentView, error) {
	return callValue[[]BatchDeploymentView](ctx, c.client, http.MethodGet, batchEndpointPath(endpoint)+"/deployments", nil)
}

// Delete deletes a batch deployment.
func (c *BatchDeploymentClient) Delete(ctx context.Context, endpoint, name string) error {
	return c.client.do(ctx, http.MethodDelete, batchDeploymentPath(endpoint, name), nil, nil)
}
