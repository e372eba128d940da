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

// CreateBatchEndpoint creates a batch endpoint.
func (c *Client) CreateBatchEndpoint(ctx context.Context, e serving.BatchEndpoint) (*BatchEndpointView, error) {
	var out BatchEndpointView
	return &out, c.do(ctx, http.MethodPost, "/api/batch-endpoints", e, &out)
}

// UpdateBatchEndpoint replaces a batch endpoint's definition.
func (c *Client) UpdateBatchEndpoint(ctx context.Context, e serving.BatchEndpoint) (*BatchEndpointView, error) {
	var out BatchEndpointView
	return &out, c.do(ctx, http.MethodPut, batchEndpointPath(e.Name), e, &out)
}

// BatchEndpoint reads a batch endpoint.
func (c *Client) BatchEndpoint(ctx context.Context, name string) (*BatchEndpointView, error) {
	var out BatchEndpointView
	return &out, c.do(ctx, http.MethodGet, batchEndpointPath(name), nil, &out)
}

// BatchEndpoints lists the batch endpoints.
func (c *Client) BatchEndpoints(ctx context.Context) ([]BatchEndpointView, error) {
	var out []BatchEndpointView
	return out, c.do(ctx, http.MethodGet, "/api/batch-endpoints", nil, &out)
}

// DeleteBatchEndpoint deletes a batch endpoint and its deployments.
func (c *Client) DeleteBatchEndpoint(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, batchEndpointPath(name), nil, nil)
}

// InvokeBatch queues a batch scoring job.
func (c *Client) InvokeBatch(ctx context.Context, endpoint string, req BatchInvokeRequest) (*RunDetail, error) {
	var out RunDetail
	return &out, c.do(ctx, http.MethodPost, batchEndpointPath(endpoint)+"/invoke", req, &out)
}

// PutBatchDeployment creates (create) or replaces a batch deployment; setDefault makes it its
// endpoint's default.
func (c *Client) PutBatchDeployment(ctx context.Context, d serving.BatchDeployment, create, setDefault bool) (*BatchDeploymentView, error) {
	var out BatchDeploymentView
	method, p := http.MethodPut, batchDeploymentPath(d.Endpoint, d.Name)
	if create {
		method, p = http.MethodPost, batchEndpointPath(d.Endpoint)+"/deployments"
	}
	return &out, c.do(ctx, method, p+"?set_default="+strconv.FormatBool(setDefault), d, &out)
}

// BatchDeployment reads a batch deployment.
func (c *Client) BatchDeployment(ctx context.Context, endpoint, name string) (*BatchDeploymentView, error) {
	var out BatchDeploymentView
	return &out, c.do(ctx, http.MethodGet, batchDeploymentPath(endpoint, name), nil, &out)
}

// BatchDeployments lists a batch endpoint's deployments.
func (c *Client) BatchDeployments(ctx context.Context, endpoint string) ([]BatchDeploymentView, error) {
	var out []BatchDeploymentView
	return out, c.do(ctx, http.MethodGet, batchEndpointPath(endpoint)+"/deployments", nil, &out)
}

// DeleteBatchDeployment deletes a batch deployment.
func (c *Client) DeleteBatchDeployment(ctx context.Context, endpoint, name string) error {
	return c.do(ctx, http.MethodDelete, batchDeploymentPath(endpoint, name), nil, nil)
}
