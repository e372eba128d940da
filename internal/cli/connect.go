package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
)

// client connects to the workspace: --workspace or $HANGAR_URL, else the local workspace
// (started in the background when needed).
func (e *Env) client(ctx context.Context) (*api.Client, error) {
	url := e.Workspace
	if url == "" {
		url = os.Getenv("HANGAR_URL")
	}
	if url != "" {
		verify, err := e.serverTrust(ctx, url) // trust.go: an https server's certificate, pinned on first use
		if err != nil {
			return nil, err
		}
		return api.NewClient(url, e.token(url), verify), nil // e.token: login.go
	}
	h, err := home.Default()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own binary: %w", err)
	}
	c, err := h.ConnectClient(ctx, exe, e.Stderr) // trusts the certificate the home holds
	if err != nil {
		return nil, fmt.Errorf("connect to the local workspace: %w", err)
	}
	return c, nil
}

// isLocal reports whether the CLI uses the local workspace (and may restart its server).
func (e *Env) isLocal() bool {
	return e.Workspace == "" && os.Getenv("HANGAR_URL") == ""
}

// runningClient is client without starting anything: completion asks the workspace for names
// only when its server already runs (a shell's Tab must not start a server).
func (e *Env) runningClient(ctx context.Context) (*api.Client, error) {
	if !e.isLocal() {
		return e.client(ctx)
	}
	h, err := home.Default()
	if err != nil {
		return nil, err
	}
	si, err := h.Running(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := h.ReadToken()
	if err != nil {
		return nil, err
	}
	return si.Client(tok)
}
