package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/job"
)

// CreateEnvironment registers an environment version.
func (c *Client) CreateEnvironment(ctx context.Context, env job.Environment) (*EnvironmentVersion, error) {
	var out EnvironmentVersion
	return &out, c.do(ctx, http.MethodPost, "/api/environments", env, &out)
}

// ListEnvironments lists environment versions ("" = every name).
func (c *Client) ListEnvironments(ctx context.Context, name string) ([]EnvironmentVersion, error) {
	var out []EnvironmentVersion
	return out, c.do(ctx, http.MethodGet, "/api/environments?name="+url.QueryEscape(name), nil, &out)
}

// GetEnvironment shows one version ("" or "latest" = the newest).
func (c *Client) GetEnvironment(ctx context.Context, name, version string) (*EnvironmentVersion, error) {
	if version == "" {
		version = "latest"
	}
	var out EnvironmentVersion
	return &out, c.do(ctx, http.MethodGet, "/api/environments/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil, &out)
}
