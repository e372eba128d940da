package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/serving"
)

func endpointPath(name string) string { return "/api/online-endpoints/" + url.PathEscape(name) }

func deploymentPath(endpoint, name string) string {
	return endpointPath(endpoint) + "/deployments/" + url.PathEscape(name)
}

// Create creates an online endpoint.
func (c *EndpointClient) Create(ctx context.Context, e serving.Endpoint) (*EndpointView, error) {
	return call[EndpointView](ctx, c.client, http.MethodPost, "/api/online-endpoints", e)
}

// Update replaces an endpoint's description, tags and traffic.
func (c *EndpointClient) Update(ctx context.Context, e serving.Endpoint) (*EndpointView, error) {
	return call[EndpointView](ctx, c.client, http.MethodPut, endpointPath(e.Name), e)
}

// SetTraffic changes an endpoint's traffic and/or mirror traffic.
func (c *EndpointClient) SetTraffic(ctx context.Context, name string, u TrafficUpdate) (*EndpointView, error) {
	return call[EndpointView](ctx, c.client, http.MethodPatch, endpointPath(name)+"/traffic", u)
}

// Get reads an endpoint.
func (c *EndpointClient) Get(ctx context.Context, name string) (*EndpointView, error) {
	return call[EndpointView](ctx, c.client, http.MethodGet, endpointPath(name), nil)
}

// List lists the endpoints.
func (c *EndpointClient) List(ctx context.Context) ([]EndpointView, error) {
	return callValue[[]EndpointView](ctx, c.client, http.MethodGet, "/api/online-endpoints", nil)
}

// Delete deletes an endpoint and its deployments.
func (c *EndpointClient) Delete(ctx context.Context, name string) error {
	return c.client.do(ctx, http.MethodDelete, endpointPath(name), nil, nil)
}

// Credentials returns an endpoint's keys, or a fresh token.
func (c *EndpointClient) Credentials(ctx context.Context, name string) (*EndpointKeys, error) {
	return call[EndpointKeys](ctx, c.client, http.MethodPost, endpointPath(name)+"/credentials", struct{}{})
}

// RegenerateKey replaces an endpoint's primary or secondary key.
func (c *EndpointClient) RegenerateKey(ctx context.Context, name, keyType string) error {
	return c.client.do(ctx, http.MethodPost, endpointPath(name)+"/regenerate-keys", map[string]string{"key_type": keyType}, nil)
}

// Create creates a deployment (allTraffic: the endpoint sends it every request).
func (c *DeploymentClient) Create(ctx context.Context, d serving.Deployment, allTraffic bool) (*DeploymentView, error) {
	p := endpointPath(d.Endpoint) + "/deployments"
	if allTraffic {
		p += "?all_traffic=true"
	}
	return call[DeploymentView](ctx, c.client, http.MethodPost, p, d)
}

// Update replaces a deployment's definition.
func (c *DeploymentClient) Update(ctx context.Context, d serving.Deployment) (*DeploymentView, error) {
	return call[DeploymentView](ctx, c.client, http.MethodPut, deploymentPath(d.Endpoint, d.Name), d)
}

// Get reads a deployment with its replicas.
func (c *DeploymentClient) Get(ctx context.Context, endpoint, name string) (*DeploymentView, error) {
	return call[DeploymentView](ctx, c.client, http.MethodGet, deploymentPath(endpoint, name), nil)
}

// List lists an endpoint's deployments.
func (c *DeploymentClient) List(ctx context.Context, endpoint string) ([]DeploymentView, error) {
	return callValue[[]DeploymentView](ctx, c.client, http.MethodGet, endpointPath(endpoint)+"/deployments", nil)
}

// Delete deletes a deployment that takes no traffic.
func (c *DeploymentClient) Delete(ctx context.Context, endpoint, name string) error {
	return c.client.do(ctx, http.MethodDelete, deploymentPath(endpoint, name), nil, nil)
}
