package api

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Roles a user may have in a workspace (docs/users.md).
const (
	// RoleOwner may do everything: secrets, users, roles, settings, the audit log.
	RoleOwner = "owner"
	// RoleContributor reads, submits and cancels jobs, creates assets, endpoints, deployments.
	RoleContributor = "contributor"
	// RoleComputeOperator reads, and manages computes, nodes, instances and sizes.
	RoleComputeOperator = "compute-operator"
	// RoleReader reads everything but secrets' values and endpoint keys.
	RoleReader = "reader"
	// AdminUser is the user the workspace token ($HANGAR_HOME/token) acts as: the bootstrap
	// owner, who cannot be deleted or demoted.
	AdminUser = "admin"
	// DefaultTokenDays is how long a personal token lasts when its expiry is not given.
	DefaultTokenDays = 90
)

// Roles lists the roles, most powerful first.
var Roles = []string{RoleOwner, RoleContributor, RoleComputeOperator, RoleReader}

// User is a workspace user.
type User struct {
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	// OIDCSubject is the OpenID Connect subject the user signs in to the studio as.
	OIDCSubject string `json:"oidc_subject,omitempty"`
}

// CreateUserRequest adds a user; the reply carries the user's first personal token.
type CreateUserRequest struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// ExpiresDays is the first token's lifetime (0: DefaultTokenDays).
	ExpiresDays int `json:"expires_days,omitempty"`
	// OIDCSubject links the user to the subject ("sub") they sign in to the studio as at the
	// server's OpenID Connect issuer (empty: none).
	OIDCSubject string `json:"oidc_subject,omitempty"`
}

// CreateUserReply is the new user and their first token, shown this once.
type CreateUserReply struct {
	User  User         `json:"user"`
	Token TokenCreated `json:"token"`
}

// SetOIDCSubjectRequest links a user to an OpenID Connect subject ("" unlinks them).
type SetOIDCSubjectRequest struct {
	Subject string `json:"subject"`
}

// SetRoleRequest changes a user's role.
type SetRoleRequest struct {
	Role string `json:"role"`
}

// CreateTokenRequest mints a personal token for the caller (or, for an owner, for User).
type CreateTokenRequest struct {
	Name        string `json:"name"`
	User        string `json:"user,omitempty"`
	ExpiresDays int    `json:"expires_days,omitempty"`
}

// TokenInfo is a personal token without its value.
type TokenInfo struct {
	User       string     `json:"user"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	// Status is active, expired or revoked.
	Status string `json:"status"`
}

// TokenCreated is a new token with its value: the only time the server gives it out.
type TokenCreated struct {
	TokenInfo
	Token string `json:"token"`
}

// WhoAmI is who the caller's credentials stand for.
type WhoAmI struct {
	User string `json:"user"`
	Role string `json:"role"`
	// Workspace is the server's workspace directory, which tells workspaces apart.
	Workspace string `json:"workspace"`
}

// AuditEntry is one change in the audit log.
type AuditEntry struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	User   string    `json:"user"`
	Action string    `json:"action"`
	Object string    `json:"object"`
	Detail string    `json:"detail,omitempty"`
}

// WhoAmI asks who the client's token stands for.
func (c *UserClient) WhoAmI(ctx context.Context) (*WhoAmI, error) {
	return call[WhoAmI](ctx, c.client, http.MethodGet, "/api/whoami", nil)
}

// Create adds a user (owners only).
func (c *UserClient) Create(ctx context.Context, req CreateUserRequest) (*CreateUserReply, error) {
	return call[CreateUserReply](ctx, c.client, http.MethodPost, "/api/users", req)
}

// List lists the workspace's users (owners only).
func (c *UserClient) List(ctx context.Context) ([]User, error) {
	return callValue[[]User](ctx, c.client, http.MethodGet, "/api/users", nil)
}

// SetRole changes a user's role (owners only).
func (c *UserClient) SetRole(ctx context.Context, name, role string) (*User, error) {
	return call[User](ctx, c.client, http.MethodPut, "/api/users/"+url.PathEscape(name)+"/role", SetRoleRequest{Role: role})
}

// SetOIDCSubject links a user to an OpenID Connect subject, or unlinks them ("") (owners only).
func (c *UserClient) SetOIDCSubject(ctx context.Context, name, subject string) (*User, error) {
	return call[User](ctx, c.client, http.MethodPut, "/api/users/"+url.PathEscape(name)+"/oidc-subject", SetOIDCSubjectRequest{Subject: subject})
}

// Delete removes a user and their tokens (owners only).
func (c *UserClient) Delete(ctx context.Context, name string) error {
	return c.client.do(ctx, http.MethodDelete, "/api/users/"+url.PathEscape(name), nil, nil)
}

// Create mints a personal token; its value is in the reply only.
func (c *TokenClient) Create(ctx context.Context, req CreateTokenRequest) (*TokenCreated, error) {
	return call[TokenCreated](ctx, c.client, http.MethodPost, "/api/tokens", req)
}

// List lists the caller's tokens, or user's ("" the caller's; "*" everyone's, owners only).
func (c *TokenClient) List(ctx context.Context, user string) ([]TokenInfo, error) {
	return callValue[[]TokenInfo](ctx, c.client, http.MethodGet, "/api/tokens?user="+url.QueryEscape(user), nil)
}

// Revoke revokes one of the caller's tokens (or, for an owner, user's).
func (c *TokenClient) Revoke(ctx context.Context, user, name string) (*TokenInfo, error) {
	return call[TokenInfo](ctx, c.client, http.MethodDelete, "/api/tokens/"+url.PathEscape(name)+"?user="+url.QueryEscape(user), nil)
}

// Audit lists the audit log (owners only): user "" for everyone's, since zero for all of it.
func (c *UserClient) Audit(ctx context.Context, user string, since time.Time) ([]AuditEntry, error) {
	q := url.Values{}
	if user != "" {
		q.Set("user", user)
	}
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339Nano))
	}
	return callValue[[]AuditEntry](ctx, c.client, http.MethodGet, "/api/audit?"+q.Encode(), nil)
}
