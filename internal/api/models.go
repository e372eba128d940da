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

// ArchiveModelRequest is the archive request of models (ArchiveVersionRequest).
type ArchiveModelRequest = ArchiveVersionRequest

// ModelClient registers, lists, shows, archives and deletes model versions.
type ModelClient struct {
	VersionClient[model.Version, CreateModelRequest]
}

// Delete deletes one version of a model, or the model (every version, its tags and aliases)
// when version is "" (docs/models.md "Deleting a model").
func (c *ModelClient) Delete(ctx context.Context, name, version string) error {
	p := c.namePath(name)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return c.client.do(ctx, http.MethodDelete, p, nil, nil)
}

func newModelClient(c *Client) *ModelClient {
	return &ModelClient{VersionClient[model.Version, CreateModelRequest]{c, "models"}}
}
