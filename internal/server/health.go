package server

import (
	"net/http"
	"os"

	"github.com/hangar-ml/hangar/internal/api"
)

// health is GET /api/health, public: a load balancer learns that the server answers, its API
// version and, on a replicated workspace, its role and the leader's address (docs/security.md:
// the servers' addresses, nothing more). Only a caller with a user's token (any role; the
// local CLI sends the workspace token) also learns the workspace's directory and the server's
// pid, which `hangar server status` and the local CLI's check of its server read. A bad token
// is not refused here: the check stays a liveness check.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	h := api.Health{OK: true, Version: api.Version}
	if s.cfg.Role != nil {
		h.Role, h.Leader = s.cfg.Role()
	}
	if s.healthUser(r) {
		h.Workspace, h.PID = s.cfg.Workspace, os.Getpid()
	}
	writeJSON(w, http.StatusOK, h)
}

// healthUser says whether r carries a valid token of a workspace user (not a run's).
func (s *Server) healthUser(r *http.Request) bool {
	tok := bearerOrBasic(r)
	if tok == "" && s.cfg.AdminToken != "" {
		return false
	}
	p, err := s.tokenPrincipal(r, tok)
	return err == nil && p.runID == ""
}
