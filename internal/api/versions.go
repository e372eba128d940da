package api

import (
	"context"
	"net/http"
	"net/url"
)

// VersionClient is the typed client of one kind of versioned asset (models, data assets,
// components), generic over its version V and its create request R: every kind has the same
// routes under its own collection, /api/<collection>.
type VersionClient[V, R any] struct {
	client     *Client
	collection string
}

// ArchiveVersionRequest archives or restores one version of a model, data asset or component
// ("" = every version of the name).
type ArchiveVersionRequest struct {
	Version string `json:"version,omitempty"`
}

// Create registers a version.
func (c *VersionClient[V, R]) Create(ctx context.Context, req R) (*V, error) {
	var out V
	return &out, c.client.do(ctx, http.MethodPost, "/api/"+c.collection, req, &out)
}

// List lists the latest version of each asset of the kind, or every version of one (name).
func (c *VersionClient[V, R]) List(ctx context.Context, name string, includeArchived bool) ([]V, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if includeArchived {
		q.Set("include_archived", "true")
	}
	var out []V
	return out, c.client.do(ctx, http.MethodGet, "/api/"+c.collection+"?"+q.Encode(), nil, &out)
}

// Get shows one version ("latest" = the newest one not archived).
func (c *VersionClient[V, R]) Get(ctx context.Context, name, version string) (*V, error) {
	var out V
	return &out, c.client.do(ctx, http.MethodGet, c.namePath(name)+"/versions/"+url.PathEscape(version), nil, &out)
}

// Archive archives (or, with archived false, restores) a version or every version, and
// returns every version of the name as they are now.
func (c *VersionClient[V, R]) Archive(ctx context.Context, name, version string, archived bool) ([]V, error) {
	verb := "archive"
	if !archived {
		verb = "restore"
	}
	var out []V
	return out, c.client.do(ctx, http.MethodPost, c.namePath(name)+"/"+verb, ArchiveVersionRequest{Version: version}, &out)
}

func (c *VersionClient[V, R]) namePath(name string) string {
	return "/api/" + c.collection + "/" + url.PathEscape(name)
}
