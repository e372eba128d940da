package mlflowapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/hangar-ml/hangar/internal/store"
)

// MLflow's error codes (databricks.ErrorCode in MLflow's protos) that Hangar answers with.
const (
	CodeInvalidParameter = "INVALID_PARAMETER_VALUE"
	CodeNotFound         = "RESOURCE_DOES_NOT_EXIST"
	CodeAlreadyExists    = "RESOURCE_ALREADY_EXISTS"
	CodeConflict         = "RESOURCE_CONFLICT" // 409 in MLflow's ERROR_CODE_TO_HTTP_STATUS
	CodePermissionDenied = "PERMISSION_DENIED"
	CodeUnauthenticated  = "UNAUTHENTICATED"
	CodeBadRequest       = "BAD_REQUEST"
	CodeInternal         = "INTERNAL_ERROR"
	CodeRequestLimit     = "REQUEST_LIMIT_EXCEEDED"  // 429
	CodeUnavailable      = "TEMPORARILY_UNAVAILABLE" // 503
)

// Error is an error answered in MLflow's shape, so that MLflow clients raise the
// exception they raise against an MLflow server (MlflowException with this error_code).
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

func mlflowInvalid(msg string) error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidParameter, Message: msg}
}

// writeMLflowError answers err in MLflow's error shape: typed errors keep their status and code,
// store.ErrNotFound is RESOURCE_DOES_NOT_EXIST, anything else a 500 whose detail is logged only.
func (s *API) writeError(w http.ResponseWriter, err error) {
	var me *Error
	switch {
	case errors.As(err, &me):
	case errors.Is(err, store.ErrNotFound):
		me = &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: err.Error()}
	default:
		if st, m, ok := s.cfg.Bodies.BodyError(err); ok {
			me = &Error{Status: st, Code: codeOf(st), Message: m}
			break
		}
		s.log.Error("mlflow api", "err", err)
		me = &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error"}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(me.Status)
	_ = json.NewEncoder(w).Encode(me)
}

// allowRun says whether the caller may read or write the run runID through the MLflow API: the
// workspace token may touch any run; a run token only its own run (a job's script logs to its
// own run and nothing else: it cannot read other runs' params or overwrite their metrics).
func (s *API) allowRun(r *http.Request, runID string) error {
	p := s.cfg.Caller(r)
	if p.Admin || (p.RunID != "" && p.RunID == runID) {
		return nil
	}
	return &Error{Status: http.StatusForbidden, Code: CodePermissionDenied,
		Message: "this token belongs to another run; it can log to its own run only"}
}

// workspaceOnly is allowRun for what no run token may do (create or search runs, change
// experiments).
func (s *API) workspaceOnly(r *http.Request) error {
	if s.cfg.Caller(r).Admin {
		return nil
	}
	return &Error{Status: http.StatusForbidden, Code: CodePermissionDenied,
		Message: "a run token can log to its own run only; use a workspace token"}
}

// WriteError answers err in MLflow's shape, as the API's handlers do (the server's refusals on
// MLflow's paths).
func (s *API) WriteError(w http.ResponseWriter, err error) { s.writeError(w, s.mlflowErr(err)) }

// WriteStatus answers a refusal the server made with its own status and message (an
// unauthenticated request, a body over its limit) with MLflow's code for the status.
func (s *API) WriteStatus(w http.ResponseWriter, status int, msg string) {
	s.writeError(w, &Error{Status: status, Code: codeOf(status), Message: msg})
}

// codeOf is MLflow's error code for an HTTP status (ERROR_CODE_TO_HTTP_STATUS read backwards);
// a status MLflow's codes do not use (413, 408, 507) is BAD_REQUEST below 500 and
// INTERNAL_ERROR from 500 on.
func codeOf(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return CodeUnauthenticated
	case http.StatusForbidden:
		return CodePermissionDenied
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusConflict:
		return CodeConflict
	case http.StatusTooManyRequests:
		return CodeRequestLimit
	case http.StatusServiceUnavailable:
		return CodeUnavailable
	}
	if status >= 500 {
		return CodeInternal
	}
	return CodeBadRequest
}

// WriteForbidden answers a refused caller with PERMISSION_DENIED and msg.
func (s *API) WriteForbidden(w http.ResponseWriter, msg string) {
	s.writeError(w, &Error{Status: http.StatusForbidden, Code: CodePermissionDenied, Message: msg})
}
