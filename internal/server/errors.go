package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
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
	status, code, msg := http.StatusInternalServerError, api.CodeInternal, "internal error"
	var he *httpError
	var ce *controller.Error
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
	writeJSON(w, status, api.ErrorBody{Error: msg, Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<20))
	if err := dec.Decode(v); err != nil {
		return badRequest("malformed JSON body: " + err.Error())
	}
	return nil
}
