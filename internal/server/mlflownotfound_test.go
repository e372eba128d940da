package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
)

// TestMLflowUnknownEndpoints: a path under MLflow's prefixes that Hangar does not serve, or a
// method a served path does not take, is 404 ENDPOINT_NOT_FOUND as JSON in MLflow's shape, for a
// user and a run's token alike (MLflow's client only reads a JSON error as a RestException, and
// get_latest_versions falls back from POST to GET on this code).
func TestMLflowUnknownEndpoints(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	runTok := ts.ctrl.RunToken("r")
	tests := []struct {
		token, method, target string
	}{
		{adminToken, http.MethodGet, "/api/2.0/mlflow/no-such/path"},
		{adminToken, http.MethodPost, "/api/2.0/mlflow/no-such/path"},
		{adminToken, http.MethodDelete, "/api/2.0/mlflow/no-such/path?name=x"},
		{adminToken, http.MethodPost, "/api/2.0/mlflow/runs/get"},   // GET only
		{adminToken, http.MethodGet, "/api/2.0/mlflow/runs/create"}, // POST only
		{adminToken, http.MethodGet, "/ajax-api/2.0/mlflow/no-such/path"},
		{adminToken, http.MethodGet, "/api/2.0/mlflow-artifacts/no-such"},
		{adminToken, http.MethodGet, "/api/3.0/mlflow/traces/tr-1"}, // MLflow 3's traces
		{runTok, http.MethodPost, "/api/3.0/mlflow/scorers/register"},
		{runTok, http.MethodPost, "/api/2.0/mlflow/no-such/path"},
		{runTok, http.MethodGet, "/api/2.0/mlflow/experiments/no-such"},
	}
	for _, tc := range tests {
		r := ts.mlflowDo(t, tc.token, tc.method, tc.target, strings.NewReader("{}"))
		var e struct {
			Code    string `json:"error_code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(r.body, &e); err != nil {
			t.Errorf("%s %s: answer is not JSON (%d %q)", tc.method, tc.target, r.status, r.body)
			continue
		}
		path, _, _ := strings.Cut(tc.target, "?")
		if r.status != http.StatusNotFound || e.Code != mlflowapi.CodeEndpointNotFound ||
			!strings.Contains(e.Message, tc.method+" ") || !strings.Contains(e.Message, strings.TrimPrefix(path, "/ajax-api")[len("/api"):]) ||
			r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s = %d %s %+v; want 404 %s naming the method and path", tc.method, tc.target, r.status, r.header.Get("Content-Type"), e, mlflowapi.CodeEndpointNotFound)
		}
	}
	// Without a token it is still the authentication's answer (in MLflow's shape), not a hint
	// about what exists.
	for _, target := range []string{"/api/2.0/mlflow/no-such/path", "/api/3.0/mlflow/traces/tr-1"} {
		if r := ts.mlflowDo(t, "", http.MethodGet, target, nil); r.status != http.StatusUnauthorized || r.errCode(t) != mlflowapi.CodeUnauthenticated {
			t.Errorf("%s without a token = %d %q, want 401 UNAUTHENTICATED", target, r.status, r.body)
		}
	}
}
