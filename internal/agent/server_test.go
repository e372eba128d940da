package agent_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
)

// The HTTP glue of the fake server, mapping errors as internal/server does.

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func decode(r *http.Request, v any) { _ = json.NewDecoder(r.Body).Decode(v) }

func answer(w http.ResponseWriter, v any, err error) {
	status := http.StatusOK
	switch {
	case errors.Is(err, cluster.ErrUnauthorized):
		status = http.StatusUnauthorized
	case errors.Is(err, cluster.ErrGone):
		status = http.StatusGone
	case errors.Is(err, cluster.ErrInvalid):
		status = http.StatusBadRequest
	case err != nil:
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err != nil {
		v = api.ErrorBody{Error: err.Error()}
	}
	_ = json.NewEncoder(w).Encode(v)
}
