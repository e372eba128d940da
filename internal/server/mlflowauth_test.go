package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
)

// mlflowRefusal sends a request and decodes its answer as MLflow's error, refusing any other
// field (Hangar's own shape is {"error", "code"}).
func (ts *testServer) mlflowRefusal(t *testing.T, method, target string, auth func(*http.Request), body []byte, chunked bool) (int, string, mlflowapi.Error) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ts.url+target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if chunked {
		req.ContentLength = -1
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	auth(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e mlflowapi.Error
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Errorf("%s %s: answer %d %q is not MLflow's error shape: %v", method, target, resp.StatusCode, b, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), e
}

// Every refusal on MLflow's paths, also those made before a request is routed (no token, a bad
// one, a role that may not, a body over its limit), is in MLflow's shape with MLflow's code for
// its status, so that MLflow's clients raise a RestException with that code (401 is
// UNAUTHENTICATED, as MLflow's basic-auth server's 401 reads to its client) instead of reporting
// an unreadable body. The refusals themselves are the server's: nothing more is let through.
func TestMLflowRefusalsInMLflowShape(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	runTok := ts.ctrl.RunToken("r")
	reader := newUserToken(t, ts, "rita", api.RoleReader)
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) {
			if tok != "" {
				r.Header.Set("Authorization", "Bearer "+tok)
			}
		}
	}
	basic := func(pass string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth("me", pass) } }
	reads := []string{
		"/api/2.0/mlflow/experiments/search?max_results=10",
		"/ajax-api/2.0/mlflow/experiments/search?max_results=10",
		"/api/2.0/preview/mlflow/registered-models/get?name=iris",
		"/api/2.0/mlflow-artifacts/artifacts?path=0/r/artifacts",
		"/api/2.0/mlflow-artifacts/artifacts/0/r/artifacts/x.txt",
		"/api/2.0/mlflow/no-such/path",
	}
	for _, target := range reads {
		for who, auth := range map[string]func(*http.Request){
			"no token": bearer(""), "a bad token": bearer("not-a-token"), "a bad personal token": bearer("hpt_" + "00"),
			"a wrong basic password": basic("wrong"),
		} {
			st, ct, e := ts.mlflowRefusal(t, http.MethodGet, target, auth, nil, false)
			if st != http.StatusUnauthorized || e.Code != mlflowapi.CodeUnauthenticated || e.Message == "" || ct != "application/json" {
				t.Errorf("%s, %s = %d %s %+v; want 401 UNAUTHENTICATED", target, who, st, ct, e)
			}
			if who == "no token" && !strings.Contains(e.Message, "MLFLOW_TRACKING_TOKEN") {
				t.Errorf("%s without a token: message %q does not name MLFLOW_TRACKING_TOKEN", target, e.Message)
			}
		}
	}
	for _, c := range []struct {
		tok, method, target, body string
	}{
		{reader, http.MethodPost, "/api/2.0/mlflow/experiments/create", `{"name": "x"}`},
		{reader, http.MethodPost, "/ajax-api/2.0/mlflow/experiments/create", `{"name": "x"}`},
		{reader, http.MethodPost, "/api/2.0/preview/mlflow/registered-models/create", `{"name": "x"}`},
		{reader, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/0/r/artifacts/x.txt", `x`},
		{runTok, http.MethodPost, "/api/2.0/mlflow/runs/search", `{}`},
		{runTok, http.MethodPost, "/ajax-api/2.0/mlflow/runs/search", `{}`},
		{runTok, http.MethodPatch, "/api/2.0/preview/mlflow/registered-models/update", `{"name": "x"}`},
	} {
		st, _, e := ts.mlflowRefusal(t, c.method, c.target, bearer(c.tok), []byte(c.body), false)
		if st != http.StatusForbidden || e.Code != mlflowapi.CodePermissionDenied || e.Message == "" {
			t.Errorf("%s %s = %d %+v; want 403 PERMISSION_DENIED", c.method, c.target, st, e)
		}
	}
	// A body over the JSON limit: refused before routing when it says its length, while it is
	// read when it does not.
	big := []byte(`{"name": "` + strings.Repeat("x", 1<<20) + `"}`)
	for _, target := range []string{"/api/2.0/mlflow/experiments/create", "/ajax-api/2.0/mlflow/experiments/create"} {
		for _, chunked := range []bool{false, true} {
			st, _, e := ts.mlflowRefusal(t, http.MethodPost, target, bearer(adminToken), big, chunked)
			if st != http.StatusRequestEntityTooLarge || e.Code != mlflowapi.CodeBadRequest || !strings.Contains(e.Message, "takes at most 1 MiB") {
				t.Errorf("POST %s of %d bytes (chunked %v) = %d %+v; want 413 BAD_REQUEST naming the limit", target, len(big), chunked, st, e)
			}
		}
	}
	// Hangar's own routes keep Hangar's shape.
	if st, eb := ts.send(t, "", http.MethodGet, "/api/jobs", nil, true); st != http.StatusUnauthorized || eb.Code != api.CodeAuth {
		t.Errorf("GET /api/jobs without a token = %d %+v", st, eb)
	}
}
