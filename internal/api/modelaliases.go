package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/model"
)

// SetModelAliasRequest points a model's alias at one of its versions.
type SetModelAliasRequest struct {
	Version string `json:"version"`
}

// ModelAlias is one alias of a model and the version it names.
type ModelAlias struct {
	Alias   string `json:"alias"`
	Version string `json:"version"`
}

// ModelAliasClient sets, deletes and lists models' aliases (MLflow's registered model aliases),
// which references like azureml:NAME@ALIAS follow.
type ModelAliasClient struct{ client *Client }

func aliasesPath(name string) string { return "/api/models/" + url.PathEscape(name) + "/aliases" }

// Set points alias at version (moving it if it named another) and returns that version.
func (c *ModelAliasClient) Set(ctx context.Context, name, alias, version string) (*model.Version, error) {
	return call[model.Version](ctx, c.client, http.MethodPut, aliasesPath(name)+"/"+url.PathEscape(alias), SetModelAliasRequest{Version: version})
}

// Delete removes an alias.
func (c *ModelAliasClient) Delete(ctx context.Context, name, alias string) error {
	return c.client.do(ctx, http.MethodDelete, aliasesPath(name)+"/"+url.PathEscape(alias), nil, nil)
}

// List lists a model's aliases, by alias.
func (c *ModelAliasClient) List(ctx context.Context, name string) ([]ModelAlias, error) {
	return callValue[[]ModelAlias](ctx, c.client, http.MethodGet, aliasesPath(name), nil)
}
