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
	mux.handle("GET /api/settings", readAccess, s.listSettings)
	mux.handle("PUT /api/settings/{key}", ownerAccess.audited("setting.set"), s.putSetting)
	mux.handle("GET /api/secrets", readAccess, s.listSecrets)
	mux.handle("PUT /api/secrets/{name}", ownerAccess.audited("secret.set"), s.setSecret)
	mux.handle("PUT /api/secrets/{name}/access", ownerAccess.audited("secret.access"), s.setSecretAccess)
	mux.handle("DELETE /api/secrets/{name}", ownerAccess.audited("secret.delete"), s.deleteSecret)
	mux.handle("POST /api/secrets/rotate-key", ownerAccess.audited("secret.rotate-key"), s.rotateKey)
	mux.handle("GET /api/runs/{id}/secrets", runTokenAccess, s.runTokenOnly(s.runSecrets))
}

func (s *secretRoutes) listSecrets(w http.ResponseWriter, r *http.Request) {
	list, err := s.cfg.Controller.Workspace.Secrets.List(r.Context())
	s.respond(w, http.StatusOK, list, err)
}

func (s *secretRoutes) setSecret(w http.ResponseWriter, r *http.Request) {
	var body api.SetSecretRequest
	if err := readJSON(r, &body); err != nil {
		writeError(w, s.log, err)
		return
	}
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

func (s *secretRoutes) setSecretAccess(w http.ResponseWriter, r *http.Request) {
	var body api.SecretAccess
	if err := readJSON(r, &body); err != nil {
		writeError(w, s.log, err)
		return
	}
	info, err := s.cfg.Controller.Workspace.Secrets.SetAccess(r.Context(), r.PathValue("name"), body)
	s.respond(w, http.StatusOK, info, err)
}

func (s *secretRoutes) deleteSecret(w http.ResponseWriter, r *http.Request) {
	used, err := s.cfg.Controller.Workspace.Secrets.Delete(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, api.SecretInfo{Name: r.PathValue("name"), UsedBy: append([]string{}, used...)})
}

func (s *secretRoutes) rotateKey(w http.ResponseWriter, r *http.Request) {
	reply, err := s.cfg.Controller.Workspace.Secrets.RotateKey(r.Context())
	s.respond(w, http.StatusOK, reply, err)
}

func (s *secretRoutes) runSecrets(w http.ResponseWriter, r *http.Request) {
	vals, err := s.cfg.Controller.Workspace.Secrets.ForRun(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, api.RunSecrets{Values: vals})
}

// runTokenOnly is runOnly without the workspace token: a route only the run's own token may
// call (the values of its secrets).
func (s *secretRoutes) runTokenOnly(h http.HandlerFunc) http.HandlerFunc {
	inner := s.runOnly(h)
	return func(w http.ResponseWriter, r *http.Request) {
		if p := who(r); p.admin || p.runID == "" {
			writeJSON(w, http.StatusForbidden, api.ErrorBody{Code: api.CodeNotAllowed,
				Error: fmt.Sprintf("only run %s's own token may read its secrets; the workspace token never reads a secret's value", r.PathValue("id"))})
			return
		}
		inner(w, r)
	}
}
