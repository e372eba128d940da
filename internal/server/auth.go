package server

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
)

type principalKey struct{}

// principal is who made a request: the workspace admin, or one run's supervisor.
type principal struct {
	admin bool
	runID string
}

// authenticate accepts the workspace token or a run token.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		var p principal
		switch {
		case s.cfg.AdminToken == "":
			p.admin = true // authentication disabled (tests)
		case tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.AdminToken)) == 1:
			p.admin = true
		default:
			id, ok := s.cfg.Controller.Tokens.Verify(tok)
			if !ok {
				writeJSON(w, http.StatusUnauthorized, api.ErrorBody{Error: "missing or invalid token (set HANGAR_TOKEN)", Code: api.CodeAuth})
				return
			}
			p.runID = id
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

func who(r *http.Request) principal {
	p, _ := r.Context().Value(principalKey{}).(principal)
	return p
}

// adminOnly refuses run tokens.
func adminOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !who(r).admin {
			writeJSON(w, http.StatusForbidden, api.ErrorBody{Error: "a run token cannot do this", Code: api.CodeNotAllowed})
			return
		}
		h(w, r)
	}
}

// runOnly lets the run named in the path (or the admin) through, and only its current attempt.
func (s *Server) runOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := who(r)
		if !p.admin && p.runID != r.PathValue("id") {
			writeJSON(w, http.StatusForbidden, api.ErrorBody{Error: "this token belongs to another run", Code: api.CodeNotAllowed})
			return
		}
		if a := r.Header.Get(api.AttemptHeader); a != "" && !p.admin {
			run, err := s.cfg.Store.Run(r.Context(), p.runID)
			if err == nil && a != strconv.Itoa(max(run.Attempt, 1)) {
				writeJSON(w, http.StatusConflict, api.ErrorBody{
					Error: fmt.Sprintf("run %s is on attempt %d; this supervisor is attempt %s", run.ID, run.Attempt, a), Code: api.CodeConflict})
				return
			}
		}
		h(w, r)
	}
}
