package mlflowapi

import (
	"fmt"
	"net/http"
)

// CodeEndpointNotFound is MLflow's code for a path (or a method on a path) the server does not
// serve. MLflow's client maps a plain 404 to it too, but only a JSON answer reaches the client
// as a RestException: get_latest_versions falls back from POST to GET on exactly this code.
const CodeEndpointNotFound = "ENDPOINT_NOT_FOUND"

// notFoundRoutes answers every other path under MLflow's prefixes, and every method a known
// path does not take, with 404 ENDPOINT_NOT_FOUND in MLflow's shape instead of the server's
// plain-text 404 or 405 (which MLflow's client reports as an unreadable body). The patterns
// name no method, so any route with a method and a longer path wins over them. MLflow 3 sends
// its traces, scorers and evaluation datasets under /api/3.0/mlflow/, none of which Hangar serves.
func (s *API) notFoundRoutes(mux Mux) {
	for _, prefix := range []string{Prefix, "/api/2.0/mlflow-artifacts/", "/api/3.0/mlflow/"} {
		mux.Handle(prefix, readOrRunAccess, s.endpointNotFound)
	}
}

func (s *API) endpointNotFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, &Error{Status: http.StatusNotFound, Code: CodeEndpointNotFound,
		Message: fmt.Sprintf("this server does not serve %s %s (see docs/mlflow.md for the MLflow endpoints Hangar serves)", r.Method, r.URL.Path)})
}
