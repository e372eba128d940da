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
	var out BatchEndpointView
	return &out, c.do(ctx, http.MethodPost, "/api/batch-endpoints", e, &out)
}

// Update replaces a batch endpoint's definition.
func (c *BatchEndpointClient) Update(ctx context.Context, e serving.BatchEndpoint) (*BatchEndpointView, error) {
	var out BatchEndpointView
	return &out, c.do(ctx, http.MethodPut, batchEndpointPath(e.Name), e, &out)
}

// Get reads a batch endpoint.
func (c *BatchEndpointClient) Get(ctx context.Context, name string) (*BatchEndpointView, error) {
	var out BatchEndpointView
	return &out, c.do(ctx, http.MethodGet, batchEndpointPath(name), nil, &out)
}

// List lists the batch endpoints.
func (c *BatchEndpointClient) List(ctx context.Context) ([]BatchEndpointView, error) {
	var out []BatchEndpointView
	return out, c.do(ctx, http.MethodGet, "/api/batch-endpoints", nil, &out)
}

// Delete deletes a batch endpoint and its deployments.
func (c *BatchEndpointClient) Delete(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, batchEndpointPath(name), nil, nil)
}

// Invoke queues a batch scoring job.
func (c *BatchEndpointClient) Invoke(ctx context.Context, endpoint string, req BatchInvokeRequest) (*RunDetail, error) {
	var out RunDetail
	return &out, c.do(ctx, http.MethodPost, batchEndpointPath(endpoint)+"/invoke", req, &out)
}

// Put creates (create) or replaces a batch deployment; setDefault makes it its
// endpoint's default.
func (c *BatchDeploymentClient) Put(ctx context.Context, d serving.BatchDeployment, create, setDefault bool) (*BatchDeploymentView, error) {
	var out BatchDeploymentView
	method, p := http.MethodPut, batchDeploymentPath(d.Endpoint, d.Name)
	if create {
		method, p = http.MethodPost, batchEndpointPath(d.Endpoint)+"/deployments"
	}
	return &out, c.do(ctx, method, p+"?set_default="+strconv.FormatBool(setDefault), d, &out)
}

// Get reads a batch deployment.
func (c *BatchDeploymentClient) Get(ctx context.Context, endpoint, name string) (*BatchDeploymentView, error) {
	var out BatchDeploymentView
	return &out, c.do(ctx, http.MethodGet, batchDeploymentPath(endpoint, name), nil, &out)
}

// List lists a batch endpoint's deployments.
func (c *BatchDeploymentClient) List(ctx context.Context, endpoint string) ([]BatchDeploymentView, error) {
	var out []BatchDeploymentView
	return out, c.do(ctx, http.MethodGet, batchEndpointPath(endpoint)+"/deployments", nil, &out)
}

// Delete deletes a batch deployment.
func (c *BatchDeploymentClient) Delete(ctx context.Context, endpoint, name string) error {
	return c.do(ctx, http.MethodDelete, batchDeploymentPath(endpoint, name), nil, nil)
}
