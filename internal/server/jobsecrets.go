package server

import (
	"fmt"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
)

// routes are the workspace's settings and its secrets' routes (docs/secrets.md). No route answers a value to
// the workspace token (nor to the studio, whose allowlist names none of them): values go in
// through PUT and come out only to a live run's own token, for the secrets its spec names and its
// submitter may use (controller/secretaccess.go).
func (s *secretRoutes) routes(_, mux routes) {
	ok := http.StatusOK
	mux.handle("GET /api/settings", readAccess, answer(s.Server, ok, s.listSettings))
	mux.handle("PUT /api/settings/{key}", ownerAccess.audited("setting.set"), noContentBody(s.Server, s.putSetting))
	mux.handle("GET /api/secrets", readAccess, answer(s.Server, ok, s.listSecrets))
	mux.handle("PUT /api/secrets/{name}", ownerAccess.audited("secret.set"), decoded(s.Server, s.setSecret))
	mux.handle("PUT /api/secrets/{name}/access", ownerAccess.audited("secret.access"), answerBody(s.Server, ok, s.setSecretAccess))
	mux.handle("DELETE /api/secrets/{name}", ownerAccess.audited("secret.delete"), answer(s.Server, ok, s.deleteSecret))
	mux.handle("POST /api/secrets/rotate-key", ownerAccess.audited("secret.rotate-key"), answer(s.Server, ok, s.rotateKey))
	mux.handle("GET /api/runs/{id}/secrets", runTokenAccess, s.runTokenOnly("its secrets", answer(s.Server, ok, s.runSecrets)))
	mux.handle("GET /api/runs/{id}/connection-credentials", runTokenAccess, s.runTokenOnly("its connection's credentials", answer(s.Server, ok, s.runConnection)))
}

func (s *secretRoutes) listSecrets(r *http.Request) ([]api.SecretInfo, error) {
	return s.cfg.Controller.Workspace.Secrets.List(r.Context())
}

// setSecret answers 201 when it made the secret, 200 when it replaced its value.
func (s *secretRoutes) setSecret(w http.ResponseWriter, r *http.Request, body api.SetSecretRequest) {
	name := r.PathValue("name")
	created, err := s.cfg.Controller.Workspace.Secrets.Set(r.Context(), name, body.Value, body.Access)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	reply := api.SetSecretReply{Name: name, Created: created}
	if info, err := s.secretInfo(r, name); err == nil {
		reply.Access = info.Access
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, reply)
}

// secretInfo is what secret list says of one secret.
func (s *secretRoutes) secretInfo(r *http.Request, name string) (*api.SecretInfo, error) {
	list, err := s.cfg.Controller.Workspace.Secrets.List(r.Context())
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i], nil
		}
	}
	return nil, fmt.Errorf("secret %s: %w", name, store.ErrNotFound)
}

func (s *secretRoutes) setSecretAccess(r *http.Request, body api.SecretAccess) (*api.SecretInfo, error) {
	return s.cfg.Controller.Workspace.Secrets.SetAccess(r.Context(), r.PathValue("name"), body)
}

func (s *secretRoutes) deleteSecret(r *http.Request) (*api.SecretInfo, error) {
	used, err := s.cfg.Controller.Workspace.Secrets.Delete(r.Context(), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return &api.SecretInfo{Name: r.PathValue("name"), UsedBy: append([]string{}, used...)}, nil
}

func (s *secretRoutes) rotateKey(r *http.Request) (*api.RotateKeyReply, error) {
	return s.cfg.Controller.Workspace.Secrets.RotateKey(r.Context())
}

func (s *secretRoutes) runSecrets(r *http.Request) (*api.RunSecrets, error) {
	vals, err := s.cfg.Controller.Workspace.Secrets.ForRun(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &api.RunSecrets{Values: vals}, nil
}

// runConnection answers an import run's supervisor the connection its import reads, with its
// credentials (connections.go in package workspace: only while the run is live).
func (s *secretRoutes) runConnection(r *http.Request) (*api.ConnectionCredentials, error) {
	return s.cfg.Controller.Workspace.Connections.ForRun(r.Context(), r.PathValue("id"))
}

// runTokenOnly is runOnly without the workspace token: a route only the run's own token may
// call (the values of its secrets, its datastores' credentials: what says what).
func (s *Server) runTokenOnly(what string, h http.HandlerFunc) http.HandlerFunc {
	inner := s.runOnly(h)
	return func(w http.ResponseWriter, r *http.Request) {
		if p := who(r); p.admin || p.runID == "" {
			writeJSON(w, http.StatusForbidden, api.ErrorBody{Code: api.CodeNotAllowed,
				Error: fmt.Sprintf("only run %s's own token may read %s; a user's token never reads a secret's value", r.PathValue("id"), what)})
			return
		}
		inner(w, r)
	}
}
