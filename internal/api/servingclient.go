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

// CreateEndpoint creates an online endpoint.
func (c *Client) CreateEndpoint(ctx context.Context, e serving.Endpoint) (*EndpointView, error) {
	var out EndpointView
	return &out, c.do(ctx, http.MethodPost, "/api/online-endpoints", e, &out)
}

// UpdateEndpoint replaces an endpoint's description, tags and traffic.
func (c *Client) UpdateEndpoint(ctx context.Context, e serving.Endpoint) (*EndpointView, error) {
	var out EndpointView
	return &out, c.do(ctx, http.MethodPut, endpointPath(e.Name), e, &out)
}

// SetTraffic changes an endpoint's traffic and/or mirror traffic.
func (c *Client) SetTraffic(ctx context.Context, name string, u TrafficUpdate) (*EndpointView, error) {
	var out EndpointView
	return &out, c.do(ctx, http.MethodPatch, endpointPath(name)+"/traffic", u, &out)
}

// Endpoint reads an endpoint.
func (c *Client) Endpoint(ctx context.Context, name string) (*EndpointView, error) {
	var out EndpointView
	return &out, c.do(ctx, http.MethodGet, endpointPath(name), nil, &out)
}

// Endpoints lists the endpoints.
func (c *Client) Endpoints(ctx context.Context) ([]EndpointView, error) {
	var out []EndpointView
	return out, c.do(ctx, http.MethodGet, "/api/online-endpoints", nil, &out)
}

// DeleteEndpoint deletes an endpoint and its deployments.
func (c *Client) DeleteEndpoint(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, endpointPath(name), nil, nil)
}

// EndpointCredentials returns an endpoint's keys, or a fresh token.
func (c *Client) EndpointCredentials(ctx context.Context, name string) (*EndpointKeys, error) {
	var out EndpointKeys
	return &out, c.do(ctx, http.MethodPost, endpointPath(name)+"/credentials", struct{}{}, &out)
}

// RegenerateKey replaces an endpoint's primary or secondary key.
func (c *Client) RegenerateKey(ctx context.Context, name, keyType string) error {
	return c.do(ctx, http.MethodPost, endpointPath(name)+"/regenerate-keys", map[string]string{"key_type": keyType}, nil)
}

// CreateDeployment creates a deployment (allTraffic: the endpoint sends it every request).
func (c *Client) CreateDeployment(ctx context.Context, d serving.Deployment, allTraffic bool) (*DeploymentView, error) {
	var out DeploymentView
	p := endpointPath(d.Endpoint) + "/deployments"
	if allTraffic {
		p += "?all_traffic=true"
	}
	return &out, c.do(ctx, http.MethodPost, p, d, &out)
}

// UpdateDeployment replaces a deployment's definition.
func (c *Client) UpdateDeployment(ctx context.Context, d serving.Deployment) (*DeploymentView, error) {
	var out DeploymentView
	return &out, c.do(ctx, http.MethodPut, deploymentPath(d.Endpoint, d.Name), d, &out)
}

// Deployment reads a deployment with its replicas.
func (c *Client) Deployment(ctx context.Context, endpoint, name string) (*DeploymentView, error) {
	var out DeploymentView
	return &out, c.do(ctx, http.MethodGet, deploymentPath(endpoint, name), nil, &out)
}

// Deployments lists an endpoint's deployments.
func (c *Client) Deployments(ctx context.Context, endpoint string) ([]DeploymentView, error) {
	var out []DeploymentView
	return out, c.do(ctx, http.MethodGet, endpointPath(endpoint)+"/deployments", nil, &out)
}

// DeleteDeployment deletes a deployment that takes no traffic.
func (c *Client) DeleteDeployment(ctx context.Context, endpoint, name string) error {
	return c.do(ctx, http.MethodDelete, deploymentPath(endpoint, name), nil, nil)
}
