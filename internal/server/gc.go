package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// gcRoutes registers the blob collector (controller.CollectBlobs): owners only, since it frees
// space every user's jobs may count on, and audited. On a replicated workspace the leader
// answers it (the others forward every request), so one collection runs at a time.
func (s *blobRoutes) gcRoutes(mux routes) {
	mux.handle("POST /api/workspace/gc", ownerAccess.audited("workspace.gc"), s.collectBlobs)
}

func (s *blobRoutes) collectBlobs(w http.ResponseWriter, r *http.Request) {
	var req api.GCRequest
	if r.ContentLength != 0 {
		if err := readJSON(r, &req); err != nil {
			writeError(w, s.log, err)
			return
		}
	}
	grace := s.cfg.Controller.Settings.BlobGrace
	if req.GraceSeconds != nil {
		if *req.GraceSeconds < 0 {
			writeError(w, s.log, badRequest(fmt.Sprintf("grace_seconds: want 0 or more, got %d", *req.GraceSeconds)))
			return
		}
		grace = time.Duration(*req.GraceSeconds) * time.Second
	}
	rep, err := s.cfg.Controller.GC.CollectBlobs(r.Context(), req.DryRun, grace)
	s.respond(w, http.StatusOK, rep, err)
}
