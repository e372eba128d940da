package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/model"
)

// CreateModelRequest registers a model version. Manifest is set when the client uploaded the
// files at Spec.Path (a local path, then only shown); otherwise Spec.Path is a job output URI.
type CreateModelRequest struct {
	Spec     model.Spec `json:"spec"`
	Manifest string     `json:"manifest,omitempty"`
}

// ArchiveModelRequest archives or restores one version ("" = every version of the model).
type ArchiveModelRequest struct {
	Version string `json:"version,omitempty"`
}

// Create registers a model version.
func (c *ModelClient) Create(ctx context.Context, req CreateModelRequest) (*model.Version, error) {
	var out model.Version
	return &out, c.do(ctx, http.MethodPost, "/api/models", req, &out)
}

// List lists the latest version of each model, or every version of one (name).
func (c *ModelClient) List(ctx context.Context, name string, includeArchived bool) ([]model.Version, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if includeArchived {
		q.Set("include_archived", "true")
	}
	var out []model.Version
	return out, c.do(ctx, http.MethodGet, "/api/models?"+q.Encode(), nil, &out)
}

// Get shows one version ("latest" = the highest one not archived).
func (c *ModelClient) Get(ctx context.Context, name, version string) (*model.Version, error) {
	var out model.Version
	return &out, c.do(ctx, http.MethodGet, "/api/models/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil, &out)
}

// Archive archives (or, with archived false, restores) a version or every version, and
// returns every version of the model as they are now.
func (c *ModelClient) Archive(ctx context.Context, name, version string, archived bool) ([]model.Version, error) {
	verb := "archive"
	if !archived {
		verb = "restore"
	}
	var out []model.Version
	return out, c.do(ctx, http.MethodPost, "/api/models/"+url.PathEscape(name)+"/"+verb, ArchiveModelRequest{Version: version}, &out)
}
