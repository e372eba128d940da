package server

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/secrets"
)

const dsSecret = "s3-secret-route-4be1"

// newDatastoreServer is a test server whose controller seals, with datastore s3ds (S3 keys) and
// jobs ja and jb (naming no datastore) and jd (an input on s3ds).
func newDatastoreServer(t *testing.T) *testServer {
	t.Helper()
	ts := newTestServer(t)
	box, err := secrets.OpenBox(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	ts.ctrl.Secrets = box
	ts.ctrl.Workspace.Sealer = box
	d, err := ts.admin.Datastores.Create(t.Context(), datastore.Datastore{Name: "s3ds", Type: datastore.TypeS3, Bucket: "data",
		EndpointURL: "http://127.0.0.1:7070"}, &datastore.Credentials{AccessKeyID: "AKID", SecretAccessKey: dsSecret})
	if err != nil || d.CredentialKind != "access_key" {
		t.Fatalf("create s3ds = %+v, %v", d, err)
	}
	for _, name := range []string{"ja", "jb"} {
		if _, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: name, Command: "true"}}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	if _, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: "jd", Command: "ls",
		Inputs: map[string]job.Input{"d": {Type: job.URIFolder, Path: "azureml://datastores/s3ds/paths/in/"}}}}); err != nil {
		t.Fatalf("create jd: %v", err)
	}
	return ts
}

// The route answers a live run's own token only: not another run's, not a user's, not once the
// run has ended.
func TestDatastoreCredentialsRouteRefusals(t *testing.T) {
	ts := newDatastoreServer(t)
	ctx := t.Context()
	if got, err := ts.runClient("ja").Runs.DatastoreCredentials(ctx, "ja"); err != nil || len(got) != 0 {
		t.Fatalf("ja (naming no datastore) = %+v, %v; want none", got, err)
	}
	got, err := ts.runClient("jd").Runs.DatastoreCredentials(ctx, "jd")
	if want := (datastore.Credentials{AccessKeyID: "AKID", SecretAccessKey: dsSecret}); err != nil || len(got) != 1 || got["s3ds"] != want {
		t.Fatalf("jd's datastores' credentials = %v, %v; want s3ds's", got, err)
	}
	_, err = ts.runClient("ja").Runs.DatastoreCredentials(ctx, "jd")
	if st, _ := apiStatus(t, err); st != http.StatusForbidden {
		t.Fatalf("ja's token reading jd's: %v; want 403", err)
	}
	_, err = ts.runClient("ja").Runs.DatastoreCredentials(ctx, "jb")
	if st, _ := apiStatus(t, err); st != http.StatusForbidden {
		t.Fatalf("ja's token reading jb's: %v; want 403", err)
	}
	for _, tok := range []string{adminToken, "", "hrt1.forged"} {
		st, body := ts.raw(t, tok, http.MethodGet, "/api/runs/ja/datastore-credentials", "")
		if st/100 == 2 {
			t.Fatalf("token %q read ja's datastores' credentials", tok)
		}
		if tok == adminToken && (st != http.StatusForbidden || !strings.Contains(body.Error, "only the run's own token")) {
			t.Fatalf("workspace token: %d %+v", st, body)
		}
	}
	ts.report(t, "ja", job.Preparing, nil)
	zero := 0
	ts.report(t, "ja", job.Completed, &zero)
	_, err = ts.runClient("ja").Runs.DatastoreCredentials(ctx, "ja")
	if st, _ := apiStatus(t, err); st != http.StatusConflict {
		t.Fatalf("a completed run read its datastores' credentials: %v", err)
	}
}

// No answer a user's token gets holds a datastore's secret: not the create's, not list, not show;
// a run's token neither creates nor deletes a datastore; delete removes it.
func TestDatastoreCredentialsNeverAnswered(t *testing.T) {
	ts := newDatastoreServer(t)
	for _, path := range []string{"/api/datastores", "/api/datastores/s3ds", "/api/jobs/jd", "/api/runs/jd/spec"} {
		body := get(t, ts, path)
		if strings.Contains(body, dsSecret) || strings.Contains(body, "AKID") ||
			(strings.HasPrefix(path, "/api/datastores") && !strings.Contains(body, `"credential_kind":"access_key"`)) {
			t.Fatalf("GET %s: %s", path, body)
		}
	}
	for _, req := range []struct{ method, path, body string }{
		{http.MethodPut, "/api/datastores/x", `{"name":"x","type":"s3","bucket":"data"}`},
		{http.MethodDelete, "/api/datastores/s3ds", ""},
	} {
		if st, _ := ts.raw(t, ts.ctrl.RunToken("ja"), req.method, req.path, req.body); st != http.StatusForbidden {
			t.Errorf("run token %s %s: status %d, want 403", req.method, req.path, st)
		}
	}
	if st, body := ts.raw(t, adminToken, http.MethodPut, "/api/datastores/f", `{"name":"f","type":"azure_file"}`); st != http.StatusBadRequest ||
		!strings.Contains(body.Error, "azure_file") {
		t.Errorf("azure_file: %d %+v", st, body)
	}
	if d, err := ts.admin.Datastores.Delete(t.Context(), "s3ds"); err != nil || d.Name != "s3ds" {
		t.Fatalf("delete = %+v, %v", d, err)
	}
	_, err := ts.admin.Datastores.Get(t.Context(), "s3ds")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("after delete: %v", err)
	}
}
