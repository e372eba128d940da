package api

import (
	"context"
	"net/http"
	"time"
)

// StudioLogin is a one-time login code for the web studio (POST /api/studio/login-codes), and
// what the browser posts to /studio/login.
type StudioLogin struct {
	Code      string    `json:"code,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

// StudioLoginCode asks the server for a one-time studio login code, for the client's user.
func (c *UserClient) StudioLoginCode(ctx context.Context) (*StudioLogin, error) {
	return call[StudioLogin](ctx, c.client, http.MethodPost, "/api/studio/login-codes", nil)
}
