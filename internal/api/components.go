package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/component"
)

// CreateComponentRequest registers a component version: the decoded file, its code folder
// already uploaded (Spec.Job.CodeSnapshot, and each pipeline step's Spec.CodeSnapshot), and the
// file as the user named it (shown by component show).
type CreateComponentRequest struct {
	Spec   component.Spec `json:"spec"`
	Source string         `json:"source,omitempty"`
}

// ArchiveComponentRequest archives or restores one version ("" = every version).
type ArchiveComponentRequest struct {
	Version string `json:"version,omitempty"`
}

// Create registers a component version.
func (c *ComponentClient) Create(ctx context.Context, req CreateComponentRequest) (*component.Version, error) {
	var out component.Version
	return &out, c.do(ctx, http.MethodPost, "/api/components", req, &out)
}

// List lists the latest version of each component, or every version of one (name).
func (c *ComponentClient) List(ctx context.Context, name string, includeArchived bool) ([]component.Version, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if includeArchived {
		q.Set("include_archived", "true")
	}
	var out []component.Version
	return out, c.do(ctx, http.MethodGet, "/api/components?"+q.Encode(), nil, &out)
}

// Get shows one version ("latest" = the highest one not archived).
func (c *ComponentClient) Get(ctx context.Context, name, version string) (*component.Version, error) {
	var out component.Version
	return &out, c.do(ctx, http.MethodGet, "/api/components/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), nil, &out)
}

// Archive archives (or, with archived false, restores) a version or every version,
// and returns every version of the component as they are now.
func (c *ComponentClient) Archive(ctx context.Context, name, version string, archived bool) ([]component.Version, error) {
	verb := "archive"
	if !archived {
		verb = "restore"
	}
	var out []component.Version
	return out, c.do(ctx, http.MethodPost, "/api/components/"+url.PathEscape(name)+"/"+verb, ArchiveComponentRequest{Version: version}, &out)
}
