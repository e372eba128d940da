package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Workspace secrets for jobs (docs/secrets.md). A secret's value travels in one direction only
// with the workspace token: in, through SetSecret. The one route that answers values is a run's
// (RunSecrets), with its run token, for the secrets its stored spec names.

// SetSecretRequest sets a workspace secret's value, and who may use it when Access is given (a
// secret that exists keeps its access otherwise; a new one is open to every submitter).
type SetSecretRequest struct {
	Value  string        `json:"value"`
	Access *SecretAccess `json:"access,omitempty"`
}

// SecretAccess is who may name a secret in a job (PUT /api/secrets/{name}/access): owners always,
// and the users and the users of the roles listed. With none listed the secret is open: every
// user who may submit jobs may use it.
type SecretAccess struct {
	Users []string `json:"users,omitempty"`
	Roles []string `json:"roles,omitempty"`
}

// Open reports whether the secret is open to every submitter.
func (a SecretAccess) Open() bool { return len(a.Users) == 0 && len(a.Roles) == 0 }

// String says who may use the secret, as secret list shows it.
func (a SecretAccess) String() string {
	if a.Open() {
		return "every submitter"
	}
	parts := []string{"owners"}
	for _, u := range a.Users {
		parts = append(parts, "user "+u)
	}
	for _, r := range a.Roles {
		parts = append(parts, "role "+r)
	}
	return strings.Join(parts, ", ")
}

// SecretInfo is what the API says about a secret: never its value.
type SecretInfo struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Access is who may name it in a job.
	Access SecretAccess `json:"access"`
	// UsedBy lists the active jobs whose spec refers to the secret.
	UsedBy []string `json:"used_by"`
	// LastUsedBy is the run whose supervisor fetched it last ("" never), at LastUsedAt.
	LastUsedBy string    `json:"last_used_by,omitempty"`
	LastUsedAt time.Time `json:"last_used_at,omitzero"`
}

// SetSecretReply says whether the secret was created or its value replaced.
type SetSecretReply struct {
	Name    string `json:"name"`
	Created bool   `json:"created"`
	// Access is who may use it now.
	Access SecretAccess `json:"access"`
}

// RotateKeyReply describes a finished key rotation: the new key's id and how many sealed values
// (job secrets, endpoints' keys, compute targets with credentials) were resealed under it.
type RotateKeyReply struct {
	KeyID    string `json:"key_id"`
	Resealed int    `json:"resealed"`
}

// RunSecrets is what a run's supervisor gets: the values of the secrets its spec names.
type RunSecrets struct {
	Values map[string]string `json:"values"`
}

// Set creates a secret or replaces its value.
func (c *SecretClient) Set(ctx context.Context, name, value string) (*SetSecretReply, error) {
	return c.Put(ctx, name, SetSecretRequest{Value: value})
}

// Put sets a secret's value, and who may use it when req.Access is given.
func (c *SecretClient) Put(ctx context.Context, name string, req SetSecretRequest) (*SetSecretReply, error) {
	return call[SetSecretReply](ctx, c.client, http.MethodPut, "/api/secrets/"+url.PathEscape(name), req)
}

// SetAccess replaces who may use a secret, leaving its value as it is.
func (c *SecretClient) SetAccess(ctx context.Context, name string, a SecretAccess) (*SecretInfo, error) {
	return call[SecretInfo](ctx, c.client, http.MethodPut, "/api/secrets/"+url.PathEscape(name)+"/access", a)
}

// List lists the workspace's secrets (names and use, no values).
func (c *SecretClient) List(ctx context.Context) ([]SecretInfo, error) {
	return callValue[[]SecretInfo](ctx, c.client, http.MethodGet, "/api/secrets", nil)
}

// Delete removes a secret; the reply names the active jobs that still name it.
func (c *SecretClient) Delete(ctx context.Context, name string) (*SecretInfo, error) {
	return call[SecretInfo](ctx, c.client, http.MethodDelete, "/api/secrets/"+url.PathEscape(name), nil)
}

// RotateKey reseals every sealed value of the workspace under a new key.
func (c *SecretClient) RotateKey(ctx context.Context) (*RotateKeyReply, error) {
	return call[RotateKeyReply](ctx, c.client, http.MethodPost, "/api/secrets/rotate-key", struct{}{})
}

// Secrets fetches, with a run token, the values of the secrets the run's spec names.
func (c *RunClient) Secrets(ctx context.Context, runID string) (*RunSecrets, error) {
	return call[RunSecrets](ctx, c.client, http.MethodGet, "/api/runs/"+url.PathEscape(runID)+"/secrets", nil)
}
