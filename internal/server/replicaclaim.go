package server

import (
	"context"
	"errors"
	"net/http"
	"regexp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// replicaClaimer is the capability of the Kubernetes backend whose online deployments are
// Deployments: a pod claims one of its Deployment's replica runs with the Deployment's claim
// token (internal/backend/kubernetes/claim.go).
type replicaClaimer interface {
	ClaimReplica(ctx context.Context, token, pod string, ended func(context.Context, string) (bool, error)) (api.SupervisorConfig, error)
}

// claimRefusal is the kind of a refused claim the backend returns: denied (401) or nothing to
// claim yet (409, ask again).
type claimRefusal interface{ ClaimDenied() bool }

// podName is a pod's name as Kubernetes allows it (a DNS subdomain), checked before it reaches
// the API server.
var podName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// replicaClaimRoutes adds the route the pods of Deployments claim replica runs by, outside user
// authentication: it takes the claim token only (no run, workspace or user token), which opens
// that one Deployment's runs.
func (s *endpointRoutes) replicaClaimRoutes(mux routes) {
	mux.handle("POST /api/replica-claims", publicAccess, s.claimReplica)
}

func (s *endpointRoutes) claimReplica(w http.ResponseWriter, r *http.Request) {
	kb, ok := s.cfg.Backends[compute.TypeKubernetes].(replicaClaimer)
	if !ok {
		writeError(w, s.log, &httpError{http.StatusNotFound, api.CodeNotFound, "no backend here realises replicas with claims"})
		return
	}
	token := bearer(r)
	if token == "" {
		writeError(w, s.log, &httpError{http.StatusUnauthorized, api.CodeAuth, "a replica claim needs its Deployment's claim token"})
		return
	}
	var req api.ReplicaClaimRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	if !podName.MatchString(req.Pod) {
		writeError(w, s.log, badRequest("pod: "+quoteClip(req.Pod)+" is not a pod name"))
		return
	}
	cfg, err := kb.ClaimReplica(r.Context(), token, req.Pod, s.runEnded)
	var refusal claimRefusal
	switch {
	case errors.As(err, &refusal) && refusal.ClaimDenied():
		writeError(w, s.log, &httpError{http.StatusUnauthorized, api.CodeAuth, err.Error()})
		return
	case errors.As(err, &refusal):
		writeError(w, s.log, &httpError{http.StatusConflict, api.CodeConflict, err.Error()})
		return
	case err != nil:
		writeError(w, s.log, err)
		return
	}
	// The run token is minted now, for the run's attempt as it is now.
	cfg.Token = s.cfg.Controller.RunToken(cfg.RunID)
	writeJSON(w, http.StatusOK, api.ReplicaClaim{RunID: cfg.RunID, Config: cfg})
}

// runEnded says whether a run has ended, or is not a replica of this workspace at all: such a
// run is never handed to a pod.
func (s *endpointRoutes) runEnded(ctx context.Context, id string) (bool, error) {
	run, err := s.cfg.Store.Runs.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return run.Status.Terminal() || run.Status == job.CancelRequested || run.Spec.Serve == nil, nil
}

func quoteClip(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return `"` + s + `"`
}
