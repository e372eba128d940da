package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/job"
)

// Create registers an environment version.
func (c *EnvironmentClient) Create(ctx context.Context, env job.Environment) (*EnvironmentVersion, error) {
	var out EnvironmentVersion
	return &out, c.do(ctx, http.MethodPost, "/api/environments", env, &out)
}

// List lists environment versions ("" = every name).
func (c *EnvironmentClient) List(ctx context.Context, name string) ([]EnvironmentVersion, error) {
	var out []EnvironmentVersion
	return out, c.do(ctx, http.MethodGet, "/api/environments?name="+url.QueryEscape(name), nil, &out)
}

// Get shows one version ("" or "latest" = the newest).
func (c *EnvironmentClient) Get(ctx context.Context, name, version string) (*EnvironmentVersion, error) {
	if version == "" {
		version = "latest"
	}
	var out EnvironmentVersion
	return &out, c.do(ctx, http.MethodGet, "/api/environments/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil, &out)
}
