package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/store"
)

// httpError is an error with the status code to answer.
type httpError struct {
	status int
	code   string
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error { return &httpError{http.StatusBadRequest, api.CodeInvalid, msg} }

// writeError maps typed errors to status codes; anything unknown is a 500 whose detail is logged, not sent.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	status, body := errorAnswer(w, log, err)
	writeJSON(w, status, body)
}

// errorAnswer is writeError's status and body for err.
func errorAnswer(w http.ResponseWriter, log *slog.Logger, err error) (int, api.ErrorBody) {
	status, code, msg := http.StatusInternalServerError, api.CodeInternal, "internal error"
	var he *httpError
	var ce *controller.Error
	if st, c, m, ok := bodyError(err); ok {
		return st, api.ErrorBody{Error: m, Code: c}
	}
	if m, ok := noSpace(err, workspaceOf(w)); ok {
		log.Error("no space left on device", "err", err)
		return http.StatusInsufficientStorage, api.ErrorBody{Error: m, Code: api.CodeNoSpace}
	}
	switch {
	case errors.As(err, &he):
		status, code, msg = he.status, he.code, he.msg
	case errors.As(err, &ce):
		msg = ce.Msg
		switch ce.Kind {
		case controller.Invalid:
			status, code = http.StatusBadRequest, api.CodeInvalid
		case controller.NotFound:
			status, code = http.StatusNotFound, api.CodeNotFound
		case controller.Conflict:
			status, code = http.StatusConflict, api.CodeConflict
		case controller.Unauthorized:
			status, code = http.StatusUnauthorized, api.CodeAuth
		}
	case errors.Is(err, store.ErrNotFound), errors.Is(err, blob.ErrNotFound):
		status, code, msg = http.StatusNotFound, api.CodeNotFound, err.Error()
	case errors.Is(err, blob.ErrHashMismatch):
		status, code, msg = http.StatusBadRequest, api.CodeInvalid, err.Error()
	default:
		log.Error("request failed", "err", err)
	}
	return status, api.ErrorBody{Error: msg, Code: code}
}

// writeRequestError is writeError for a refusal made before a request is routed (its token, its
// body's size): on MLflow's paths in MLflow's shape, with the same status and message, so that
// MLflow's clients raise it as a RestException (401 UNAUTHENTICATED, 413, ...).
func (s *Server) writeRequestError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := errorAnswer(w, s.log, err)
	if isMLflowPath(r.URL.Path) {
		if errors.Is(err, errNoToken) {
			body.Error = errNoMLflowToken
		}
		s.mlflow.WriteStatus(w, status, body.Error)
		return
	}
	writeJSON(w, status, body)
}

// errNoMLflowToken is errNoToken's message in the words of MLflow's clients.
const errNoMLflowToken = "this request has no token: set MLFLOW_TRACKING_TOKEN to a Hangar token " +
	"(or MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, the token as the password; docs/mlflow.md)"

// agentError maps the clusters' errors to status codes: 401, 410 (the node is gone: the agent
// exits once idle), 400 and 404.
func agentError(err error) error {
	switch {
	case errors.Is(err, cluster.ErrUnauthorized):
		return &httpError{http.StatusUnauthorized, api.CodeAuth, err.Error()}
	case errors.Is(err, cluster.ErrGone):
		return &httpError{http.StatusGone, api.CodeNotFound, err.Error()}
	case errors.Is(err, cluster.ErrInvalid):
		return &httpError{http.StatusBadRequest, api.CodeInvalid, err.Error()}
	case errors.Is(err, cluster.ErrNoNode):
		return &httpError{http.StatusNotFound, api.CodeNotFound, err.Error()}
	}
	return err
}

// bodyError maps the errors of reading a request body (bodies.go).
func bodyError(err error) (status int, code, msg string, ok bool) {
	var tl *tooLargeError
	var sb *slowBodyError
	var be *busyError
	var bb *brokenBodyError
	switch {
	case errors.As(err, &bb):
		return http.StatusBadRequest, api.CodeInvalid, bb.Error(), true
	case errors.As(err, &tl):
		return http.StatusRequestEntityTooLarge, api.CodeTooLarge, tl.Error(), true
	case errors.As(err, &sb):
		return http.StatusRequestTimeout, api.CodeTimeout, sb.Error(), true
	case errors.As(err, &be):
		return http.StatusServiceUnavailable, api.CodeBusy, be.Error(), true
	}
	return 0, "", "", false
}

// noSpace says where the workspace ran out of disk (or quota), when that is what err is: the
// blob store's typed error names its directory; SQLite says SQLITE_FULL, the store is in the
// workspace directory.
func noSpace(err error, workspace string) (string, bool) {
	const hint = " (the workspace's disk is full)"
	var ns *blob.NoSpaceError
	var se *sqlite.Error
	switch {
	case errors.As(err, &ns):
		return ns.Error() + hint, true
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL:
		where := "the workspace database"
		if workspace != "" {
			where += " in " + workspace
		}
		return "no space left on device: writing " + where + hint, true
	case blob.IsNoSpace(err):
		return "no space left on device" + hint, true
	}
	return "", false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
