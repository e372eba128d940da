package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
)

// access is what a route needs: the user roles that may call it, whether a run's token may
// (the handler then narrows it to its own run), or that it is public (it checks its own
// credentials: a join or agent token, a login code; or needs none). Every route is registered
// with one (routes.handle), so a route without a permission cannot be added.
type access struct {
	roles  []string
	runs   bool
	public bool
	// forward: a route that hands the request to routes with their own access (/ajax-api/).
	forward bool
	// audit names the action an answered 2xx request writes to the audit log ("" none).
	audit string
	// purpose says what the roles are for, in a refusal.
	purpose string
}

var (
	allRoles = api.Roles

	// readAccess: every role reads (never a secret's value or an endpoint key: those routes
	// are not reads).
	readAccess = access{roles: allRoles}
	// contributeAccess: submit and cancel jobs; create assets, models, data, environments,
	// components, endpoints and deployments.
	contributeAccess = access{roles: []string{api.RoleOwner, api.RoleContributor},
		purpose: "submitting and cancelling jobs, creating assets, endpoints and deployments"}
	// computeAccess: manage computes, nodes, instances and sizes.
	computeAccess = access{roles: []string{api.RoleOwner, api.RoleComputeOperator},
		purpose: "managing computes, nodes, instances and sizes"}
	// ownerAccess: secrets, users, roles, settings, the audit log.
	ownerAccess = access{roles: []string{api.RoleOwner},
		purpose: "secrets, settings, users, roles and the audit log"}
	// runAccess: a run's supervisor (runOnly narrows it to its run), and owners.
	runAccess = access{roles: []string{api.RoleOwner}, runs: true, purpose: "the routes of runs' supervisors"}
	// runTokenAccess: a run's own token and nothing else (runTokenOnly narrows it).
	runTokenAccess = access{runs: true}
	// readOrRunAccess and contributeOrRunAccess: reads by every role, writes by those who
	// submit, and both by live runs (blobs: their supervisors; MLflow: their scripts, which
	// allowRun keeps to their own run).
	readOrRunAccess       = access{roles: allRoles, runs: true}
	contributeOrRunAccess = access{roles: contributeAccess.roles, runs: true, purpose: contributeAccess.purpose}
	// publicAccess: outside user authentication.
	publicAccess = access{public: true}
	// forwardAccess: authenticated, and then the access of the route it forwards to.
	forwardAccess = access{forward: true}
)

// audited is a with the action an answered request records in the audit log.
func (a access) audited(action string) access {
	a.audit = action
	return a
}

// allows says whether p may call a route with this access, and why not.
func (a access) allows(p principal, pattern string) error {
	switch {
	case a.public, a.forward:
		return nil
	case p.runID != "":
		if a.runs {
			return nil
		}
		return &httpError{http.StatusForbidden, api.CodeNotAllowed, "a run token cannot do this"}
	case slices.Contains(a.roles, p.role):
		return nil
	case len(a.roles) == 0: // runTokenAccess: the values of a run's secrets
		return &httpError{http.StatusForbidden, api.CodeNotAllowed, fmt.Sprintf(
			"only the run's own token may call %s (user %s has the role %s); the workspace token never reads a secret's value, nor does any user",
			pattern, p.user, p.role)}
	}
	msg := fmt.Sprintf("user %s has the role %s; %s needs the role %s", p.user, p.role, pattern, strings.Join(a.roles, " or "))
	if a.purpose != "" {
		msg += " (" + a.purpose + ")"
	}
	return &httpError{http.StatusForbidden, api.CodeNotAllowed, msg}
}

// route is one registered route and the access it needs.
type route struct {
	pattern string
	access  access
}

// routes registers a server's handlers on one of its muxes. It is the only way routes are
// added: each takes its access, and lands in the server's table (what the authorization
// matrix test walks).
type routes struct {
	s   *Server
	mux *http.ServeMux
	// authenticate is set on the outer mux, whose non-public routes authenticate themselves
	// (the API mux is authenticated as a whole).
	authenticate bool
}

// handle registers h for pattern, behind a check of a.
func (rt routes) handle(pattern string, a access, h http.HandlerFunc) {
	rt.s.table = append(rt.s.table, route{pattern: pattern, access: a})
	var handler http.Handler = rt.s.gate(pattern, a, h)
	if rt.authenticate && !a.public {
		handler = rt.s.authenticate(handler)
	}
	rt.mux.Handle(pattern, handler)
}

// registered lists the routes Handler registered and what each needs (the matrix test).
func (s *Server) registered() []route { return slices.Clone(s.table) }

// gate refuses a caller a does not allow, and records audited changes.
func (s *Server) gate(pattern string, a access, h http.HandlerFunc) http.HandlerFunc {
	if a.public {
		return h
	}
	if a.audit != "" {
		h = s.identity.audited(pattern, a.audit, h)
	}
	path := pattern[strings.IndexByte(pattern, ' ')+1:] // "GET /api/..." or "/api/..."
	mlflow := isMLflowPath(path)
	return func(w http.ResponseWriter, r *http.Request) {
		if err := a.allows(who(r), pattern); err != nil {
			if mlflow {
				s.mlflow.WriteForbidden(w, err.Error())
				return
			}
			writeError(w, s.log, err)
			return
		}
		h(w, r)
	}
}
