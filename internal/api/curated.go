package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/job"
)

// CuratedEnvironment is a mapping of Azure's curated environments (by name or pattern) to what
// the workspace runs them in (GET and PUT /api/settings/curated-environments).
type CuratedEnvironment struct {
	// Name is a curated environment's name (sklearn-1.5) or a pattern (sklearn-*, * any run of
	// characters), matched with or without Azure's AzureML- prefix, in any case.
	Name string `json:"name"`
	// Environment is a registered environment (Ref: name, name:version, name@latest) or a
	// definition of its own (image, conda_spec, requirements_text, interpreter_path).
	Environment job.Environment `json:"environment"`
	Description string          `json:"description,omitempty"`
	// Builtin marks one of Hangar's defaults; Removed a default an owner removed (unmapped).
	Builtin bool `json:"builtin,omitempty"`
	Removed bool `json:"removed,omitempty"`
	// RunsIn says what Environment is, for people (set by the server).
	RunsIn string `json:"runs_in,omitempty"`
}

// Curated lists the mappings in force, and the defaults owners removed.
func (c *EnvironmentClient) Curated(ctx context.Context) ([]CuratedEnvironment, error) {
	return callValue[[]CuratedEnvironment](ctx, c.client, http.MethodGet, "/api/settings/curated-environments", nil)
}

// SetCurated maps a curated name or pattern (owners).
func (c *EnvironmentClient) SetCurated(ctx context.Context, m CuratedEnvironment) (*CuratedEnvironment, error) {
	return call[CuratedEnvironment](ctx, c.client, http.MethodPut, "/api/settings/curated-environments/"+url.PathEscape(m.Name), m)
}

// RemoveCurated removes an owner's mapping (a default of the same name applies
// again) or a default (the name is then unmapped) (owners).
func (c *EnvironmentClient) RemoveCurated(ctx context.Context, name string) (*CuratedEnvironment, error) {
	return call[CuratedEnvironment](ctx, c.client, http.MethodDelete, "/api/settings/curated-environments/"+url.PathEscape(name), nil)
}
