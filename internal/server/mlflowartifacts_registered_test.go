package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
)

// The registered-models namespace of the artifact proxy serves a version's files as the proxy
// serves a run's (Range, an attachment, nosniff, a sandbox), refuses every write in MLflow's
// shape for every caller, and checks its paths as the proxy does.
func TestMLflowRegisteredModelFiles(t *testing.T) {
	ts := newTestServer(t)
	files := map[string]string{"MLmodel": "flavors: {}\n", "model.pkl": "0123456789", "page.html": "<script>alert(1)</script>", "data/x.csv": "a,b\n"}
	if _, err := ts.admin.Models.Create(t.Context(), api.CreateModelRequest{
		Spec: model.Spec{Name: "iris", Type: model.MLflowModel, Path: "/client/m"}, Manifest: manifestOf(t, ts, files)}); err != nil {
		t.Fatal(err)
	}
	createModels(t, ts, model.Spec{Name: "iris", Version: "0.0.1"})
	const root = "/api/2.0/mlflow-artifacts/artifacts/registered-models/iris/1/"

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.url+root+"model.pkl", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Range", "bytes=2-5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(b) != "2345" || resp.Header.Get("Content-Range") != "bytes 2-5/10" {
		t.Errorf("a Range GET = %d %q %q", resp.StatusCode, b, resp.Header.Get("Content-Range"))
	}
	r := ts.mlflowDo(t, adminToken, http.MethodGet, root+"page.html", nil)
	for k, want := range map[string]string{"Content-Type": "application/octet-stream", "X-Content-Type-Options": "nosniff",
		"Content-Security-Policy": "sandbox", "Content-Disposition": "attachment; filename=page.html"} {
		if got := r.header.Get(k); r.status != 200 || got != want {
			t.Errorf("GET page.html = %d, %s %q, want %q", r.status, k, got, want)
		}
	}
	if r := ts.mlflowDo(t, adminToken, http.MethodGet, listPath("registered-models/iris/1/model.pkl"), nil); r.status != 200 || strings.TrimSpace(string(r.body)) != "{}" {
		t.Errorf("listing a file = %d %s, want {} (as MLflow lists a file)", r.status, r.body)
	}
	if r := ts.mlflowDo(t, adminToken, http.MethodGet, listPath("registered-models/iris/1/data"), nil); r.status != 200 ||
		strings.TrimSpace(string(r.body)) != `{"files":[{"path":"x.csv","is_dir":false,"file_size":4}]}` {
		t.Errorf("listing data/ = %d %s", r.status, r.body)
	}

	ts.createJob(t, "r")
	runTok := ts.ctrl.RunToken("r")
	for _, tok := range []string{adminToken, runTok} {
		for _, c := range []struct{ method, target, body string }{
			{http.MethodPut, root + "model.pkl", "FORGED"},
			{http.MethodPut, root + "new.txt", "new"},
			{http.MethodDelete, root + "model.pkl", ""},
			{http.MethodDelete, "/api/2.0/mlflow-artifacts/artifacts/registered-models/iris/1", ""},
			{http.MethodPost, "/api/2.0/mlflow-artifacts/mpu/create/registered-models/iris/1", `{"path":"model.pkl","num_parts":1}`},
			{http.MethodPost, "/api/2.0/mlflow-artifacts/mpu/complete/registered-models/iris/1", `{"path":"model.pkl","upload_id":"x","parts":[]}`},
			{http.MethodPost, "/api/2.0/mlflow-artifacts/mpu/abort/registered-models/iris/1", `{"path":"model.pkl","upload_id":"x"}`},
		} {
			r := ts.mlflowDo(t, tok, c.method, c.target, strings.NewReader(c.body))
			if r.status != http.StatusForbidden || r.errCode(t) != mlflowapi.CodePermissionDenied || !strings.Contains(string(r.body), "read-only") {
				t.Errorf("%s %s = %d %s; want 403 PERMISSION_DENIED, read-only", c.method, c.target, r.status, r.body)
			}
		}
	}
	if r := ts.mlflowDo(t, adminToken, http.MethodGet, root+"model.pkl", nil); string(r.body) != "0123456789" {
		t.Errorf("model.pkl after the refused writes = %q", r.body)
	}

	for _, c := range []struct {
		target string
		status int
		code   string
	}{
		{root + "nothing", 404, mlflowapi.CodeNotFound},
		{root + "data", 404, mlflowapi.CodeNotFound}, // a directory is no file
		{"/api/2.0/mlflow-artifacts/artifacts/registered-models/iris/1", 404, mlflowapi.CodeNotFound},
		{"/api/2.0/mlflow-artifacts/artifacts/registered-models/iris/2/MLmodel", 404, mlflowapi.CodeNotFound},
		{"/api/2.0/mlflow-artifacts/artifacts/registered-models/iris/0.0.1/MLmodel", 404, mlflowapi.CodeNotFound}, // MLflow sees integer versions only
		{"/api/2.0/mlflow-artifacts/artifacts/registered-models/ghost/1/MLmodel", 404, mlflowapi.CodeNotFound},
		{"/api/2.0/mlflow-artifacts/artifacts/registered-models/iris", 400, mlflowapi.CodeInvalidParameter},
		{root + "%2e%2e/2/MLmodel", 400, mlflowapi.CodeInvalidParameter},
		{listPath("registered-models/iris/1/../2"), 400, mlflowapi.CodeInvalidParameter},
		{listPath("registered-models/iris/3"), 404, mlflowapi.CodeNotFound},
	} {
		if r := ts.mlflowDo(t, adminToken, http.MethodGet, c.target, nil); r.status != c.status || r.errCode(t) != c.code {
			t.Errorf("GET %s = %d %s; want %d %s", c.target, r.status, r.body, c.status, c.code)
		}
	}
	// Without a token: 401, in MLflow's shape, before anything is looked up.
	if r := ts.mlflowDo(t, "", http.MethodGet, root+"model.pkl", nil); r.status != http.StatusUnauthorized || r.errCode(t) != mlflowapi.CodeUnauthenticated {
		t.Errorf("no token = %d %s", r.status, r.body)
	}
}
