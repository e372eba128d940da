package server

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tokens"
)

type principalKey struct{}

// principal is who made a request: a workspace user (the workspace token acts as the user
// "admin", an owner), or one run's supervisor. admin is true for every user, whatever their role
// (the route's access has checked the role before a handler runs): it means "not a run token".
type principal struct {
	admin bool
	user  string
	role  string
	runID string
	// run is a run token's run as authentication read it (state and end): what the one check
	// of its writes reads (runwrites.go).
	run *job.Run
}

// adminPrincipal is the workspace token's user: the bootstrap owner.
var adminPrincipal = principal{admin: true, user: api.AdminUser, role: api.RoleOwner}

// authenticate accepts the workspace token, a personal token (users.go) or a run token. A run
// token is good for its run's current attempt only while the run is active (and a short grace
// after its end), and until it expires (see controller.Admit): on every route that allows run
// tokens, blob routes included. Within that grace it reads, and writes only its supervisor's last
// words (endedRunWrite). Blob routes stay open to a live run's token because its
// supervisor downloads the code and inputs and uploads outputs there; blobs are
// content-addressed and verified, so a token can add blobs but never change one, and reading
// one takes its hash.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := bearerOrBasic(r)
		p, ok, err := s.identity.studioPrincipal(r, tok)
		if !ok {
			p, err = s.tokenPrincipal(r, tok)
		}
		if err != nil {
			s.writeRequestError(w, r, err)
			return
		}
		if err := endedRunWrite(p, r); err != nil { // runwrites.go
			s.writeRunError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

var errNoToken = &httpError{http.StatusUnauthorized, api.CodeAuth,
	"this request has no token: run `hangar login`, or set HANGAR_TOKEN"}

// tokenPrincipal is who a bearer token (or no token) stands for.
func (s *Server) tokenPrincipal(r *http.Request, tok string) (principal, error) {
	switch {
	case s.cfg.AdminToken == "":
		return adminPrincipal, nil // authentication disabled (tests)
	case tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.AdminToken)) == 1:
		return adminPrincipal, nil
	case tok == "":
		return principal{}, errNoToken
	case tokens.IsPersonal(tok):
		return s.identity.personalPrincipal(r.Context(), tok)
	}
	run, err := s.cfg.Controller.Authenticate(r.Context(), tok)
	if err != nil {
		return principal{}, err
	}
	return principal{runID: run.ID, run: run}, nil
}

// bearerOrBasic is the request's token: a bearer token (MLFLOW_TRACKING_TOKEN, the CLI), or the
// password of HTTP Basic credentials, which is how MLflow clients configured with
// MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD send it (the user name is not checked).
func bearerOrBasic(r *http.Request) string {
	if _, pass, ok := r.BasicAuth(); ok {
		return pass
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func who(r *http.Request) principal {
	p, _ := r.Context().Value(principalKey{}).(principal)
	return p
}

// runOnly lets the run named in the path (or a user: runAccess lets only owners here) through, and only its current attempt.
func (s *Server) runOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := who(r)
		if !p.admin && p.runID != r.PathValue("id") {
			writeJSON(w, http.StatusForbidden, api.ErrorBody{Error: "this token belongs to another run", Code: api.CodeNotAllowed})
			return
		}
		if a := r.Header.Get(api.AttemptHeader); a != "" && !p.admin {
			run, err := s.cfg.Store.Runs.Run(r.Context(), p.runID)
			if err == nil && a != strconv.Itoa(max(run.Attempt, 1)) {
				writeJSON(w, http.StatusConflict, api.ErrorBody{
					Error: fmt.Sprintf("run %s is on attempt %d; this supervisor is attempt %s", run.ID, run.Attempt, a), Code: api.CodeConflict})
				return
			}
		}
		h(w, r)
	}
}
