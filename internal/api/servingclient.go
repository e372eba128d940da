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
	var out EndpointView
	return &out, c.do(ctx, http.MethodPost, "/api/online-endpoints", e, &out)
}

// Update replaces an endpoint's description, tags and traffic.
func (c *EndpointClient) Update(ctx context.Context, e serving.Endpoint) (*EndpointView, error) {
	var out EndpointView
	return &out, c.do(ctx, http.MethodPut, endpointPath(e.Name), e, &out)
}

// SetTraffic changes an endpoint's traffic and/or mirror traffic.
func (c *EndpointClient) SetTraffic(ctx context.Context, name string, u TrafficUpdate) (*EndpointView, error) {
	var out EndpointView
	return &out, c.do(ctx, http.MethodPatch, endpointPath(name)+"/traffic", u, &out)
}

// Get reads an endpoint.
func (c *EndpointClient) Get(ctx context.Context, name string) (*EndpointView, error) {
	var out EndpointView
	return &out, c.do(ctx, http.MethodGet, endpointPath(name), nil, &out)
}

// List lists the endpoints.
func (c *EndpointClient) List(ctx context.Context) ([]EndpointView, error) {
	var out []EndpointView
	return out, c.do(ctx, http.MethodGet, "/api/online-endpoints", nil, &out)
}

// Delete deletes an endpoint and its deployments.
func (c *EndpointClient) Delete(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, endpointPath(name), nil, nil)
}

// Credentials returns an endpoint's keys, or a fresh token.
func (c *EndpointClient) Credentials(ctx context.Context, name string) (*EndpointKeys, error) {
	var out EndpointKeys
	return &out, c.do(ctx, http.MethodPost, endpointPath(name)+"/credentials", struct{}{}, &out)
}

// RegenerateKey replaces an endpoint's primary or secondary key.
func (c *EndpointClient) RegenerateKey(ctx context.Context, name, keyType string) error {
	return c.do(ctx, http.MethodPost, endpointPath(name)+"/regenerate-keys", map[string]string{"key_type": keyType}, nil)
}

// Create creates a deployment (allTraffic: the endpoint sends it every request).
func (c *DeploymentClient) Create(ctx context.Context, d serving.Deployment, allTraffic bool) (*DeploymentView, error) {
	var out DeploymentView
	p := endpointPath(d.Endpoint) + "/deployments"
	if allTraffic {
		p += "?all_traffic=true"
	}
	return &out, c.do(ctx, http.MethodPost, p, d, &out)
}

// Update replaces a deployment's definition.
func (c *DeploymentClient) Update(ctx context.Context, d serving.Deployment) (*DeploymentView, error) {
	var out DeploymentView
	return &out, c.do(ctx, http.MethodPut, deploymentPath(d.Endpoint, d.Name), d, &out)
}

// Get reads a deployment with its replicas.
func (c *DeploymentClient) Get(ctx context.Context, endpoint, name string) (*DeploymentView, error) {
	var out DeploymentView
	return &out, c.do(ctx, http.MethodGet, deploymentPath(endpoint, name), nil, &out)
}

// List lists an endpoint's deployments.
func (c *DeploymentClient) List(ctx context.Context, endpoint string) ([]DeploymentView, error) {
	var out []DeploymentView
	return out, c.do(ctx, http.MethodGet, endpointPath(endpoint)+"/deployments", nil, &out)
}

// Delete deletes a deployment that takes no traffic.
func (c *DeploymentClient) Delete(ctx context.Context, endpoint, name string) error {
	return c.do(ctx, http.MethodDelete, deploymentPath(endpoint, name), nil, nil)
}
