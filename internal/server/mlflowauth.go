package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/hangar-ml/hangar/internal/store"
)

// MLflow's error codes (databricks.ErrorCode in MLflow's protos) that Hangar answers with.
const (
	mlflowInvalidParameter = "INVALID_PARAMETER_VALUE"
	mlflowNotFound         = "RESOURCE_DOES_NOT_EXIST"
	mlflowAlreadyExists    = "RESOURCE_ALREADY_EXISTS"
	mlflowConflict         = "RESOURCE_CONFLICT" // 409 in MLflow's ERROR_CODE_TO_HTTP_STATUS
	mlflowPermissionDenied = "PERMISSION_DENIED"
	mlflowUnauthenticated  = "UNAUTHENTICATED"
	mlflowBadRequest       = "BAD_REQUEST"
	mlflowInternal         = "INTERNAL_ERROR"
)

// mlflowError is an error answered in MLflow's shape, so that MLflow clients raise the
// exception they raise against an MLflow server (MlflowException with this error_code).
type mlflowError struct {
	Status  int    `json:"-"`
	Code    string `json:"error_code"`
	Message string `json:"message"`
}

func (e *mlflowError) Error() string { return e.Message }

func mlflowInvalid(msg string) error {
	return &mlflowError{Status: http.StatusBadRequest, Code: mlflowInvalidParameter, Message: msg}
}

// writeMLflowError answers err in MLflow's error shape: typed errors keep their status and code,
// store.ErrNotFound is RESOURCE_DOES_NOT_EXIST, anything else a 500 whose detail is logged only.
func writeMLflowError(w http.ResponseWriter, log *slog.Logger, err error) {
	var me *mlflowError
	switch {
	case errors.As(err, &me):
	case errors.Is(err, store.ErrNotFound):
		me = &mlflowError{Status: http.StatusNotFound, Code: mlflowNotFound, Message: err.Error()}
	default:
		if st, _, m, ok := bodyError(err); ok {
			me = &mlflowError{Status: st, Code: mlflowBadRequest, Message: m}
			break
		}
		log.Error("mlflow api", "err", err)
		me = &mlflowError{Status: http.StatusInternalServerError, Code: mlflowInternal, Message: "internal error"}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(me.Status)
	_ = json.NewEncoder(w).Encode(me)
}

// allowRun says whether the caller may read or write the run runID through the MLflow API: the
// workspace token may touch any run; a run token only its own run (a job's script logs to its
// own run and nothing else: it cannot read other runs' params or overwrite their metrics).
func allowRun(r *http.Request, runID string) error {
	p := who(r)
	if p.admin || (p.runID != "" && p.runID == runID) {
		return nil
	}
	return &mlflowError{Status: http.StatusForbidden, Code: mlflowPermissionDenied,
		Message: "this token belongs to another run; it can log to its own run only"}
}

// workspaceOnly is allowRun for what no run token may do (create or search runs, change
// experiments).
func workspaceOnly(r *http.Request) error {
	if who(r).admin {
		return nil
	}
	return &mlflowError{Status: http.StatusForbidden, Code: mlflowPermissionDenied,
		Message: "a run token can log to its own run only; use a workspace token"}
}
