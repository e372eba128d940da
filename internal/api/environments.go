package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/job"
)

// Create registers an environment version.
func (c *EnvironmentClient) Create(ctx context.Context, env job.Environment) (*EnvironmentVersion, error) {
	return call[EnvironmentVersion](ctx, c.client, http.MethodPost, "/api/environments", env)
}

// List lists environment versions ("" = every name).
func (c *EnvironmentClient) List(ctx context.Context, name string) ([]EnvironmentVersion, error) {
	return callValue[[]EnvironmentVersion](ctx, c.client, http.MethodGet, "/api/environments?name="+url.QueryEscape(name), nil)
}

// Get shows one version ("" or "latest" = the newest).
func (c *EnvironmentClient) Get(ctx context.Context, name, version string) (*EnvironmentVersion, error) {
	if version == "" {
		version = "latest"
	}
	return call[EnvironmentVersion](ctx, c.client, http.MethodGet, "/api/environments/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil)
}
