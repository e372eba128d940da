package server

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/secrets"
)

const (
	valueA = "value-of-a-7f3c91"
	valueB = "value-of-b-0d12ee"
)

// newSecretServer is a test server whose controller seals secrets, with secrets a and b set
// and three jobs: ja names a, jb names b, jn names none.
func newSecretServer(t *testing.T) *testServer {
	t.Helper()
	ts := newTestServer(t)
	box, err := secrets.OpenBox(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	ts.ctrl.Secrets = box
	ts.ctrl.Workspace.Sealer = ts.ctrl.Secrets
	for name, v := range map[string]string{"a": valueA, "b": valueB} {
		reply, err := ts.admin.Secrets.Set(t.Context(), name, v)
		if err != nil || !reply.Created {
			t.Fatalf("set %s: %+v, %v", name, reply, err)
		}
	}
	for name, env := range map[string]map[string]string{
		"ja": {"A": "${{secrets.a}}"}, "jb": {"B": "${{secrets.b}}"}, "jn": nil,
	} {
		if _, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: name, Command: "env", EnvironmentVariables: env}}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	return ts
}

func TestRunTokenReadsOnlyTheSecretsItsSpecNames(t *testing.T) {
	ts := newSecretServer(t)
	ctx := t.Context()
	got, err := ts.runClient("ja").Runs.Secrets(ctx, "ja")
	if err != nil || len(got.Values) != 1 || got.Values["a"] != valueA {
		t.Fatalf("ja's secrets = %+v, %v; want a only", got, err)
	}
	if got, err := ts.runClient("jn").Runs.Secrets(ctx, "jn"); err != nil || len(got.Values) != 0 {
		t.Fatalf("jn's secrets = %+v, %v; want none", got, err)
	}
	// Another run's secrets, with ja's token: refused, whatever that run names.
	if _, err := ts.runClient("ja").Runs.Secrets(ctx, "jb"); err == nil {
		t.Fatal("ja's token read jb's secrets")
	} else if st, _ := apiStatus(t, err); st != http.StatusForbidden {
		t.Fatalf("ja reading jb's secrets: status %d, want 403", st)
	}
	// The workspace token, no token, a forged token: no values.
	for _, tok := range []string{adminToken, "", "hrt1.forged"} {
		st, body := ts.raw(t, tok, http.MethodGet, "/api/runs/ja/secrets", "")
		if st/100 == 2 {
			t.Fatalf("token %q read ja's secrets", tok)
		}
		if tok == adminToken && (st != http.StatusForbidden || !strings.Contains(body.Error, "never reads a secret's value")) {
			t.Fatalf("workspace token: %d %+v", st, body)
		}
	}
	// A run token cannot manage secrets.
	for _, req := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/secrets", ""},
		{http.MethodPut, "/api/secrets/a", `{"value":"x"}`},
		{http.MethodDelete, "/api/secrets/a", ""},
		{http.MethodPost, "/api/secrets/rotate-key", "{}"},
	} {
		if st, _ := ts.raw(t, ts.ctrl.RunToken("ja"), req.method, req.path, req.body); st != http.StatusForbidden {
			t.Errorf("run token %s %s: status %d, want 403", req.method, req.path, st)
		}
	}
	// Once the run is final its token gets nothing.
	ts.report(t, "ja", job.Preparing, nil)
	zero := 0
	ts.report(t, "ja", job.Completed, &zero)
	if _, err := ts.runClient("ja").Runs.Secrets(ctx, "ja"); err == nil {
		t.Fatal("a completed run read its secrets")
	}
}

// No response the workspace token can get holds a value: not the list, not a job, not the
// replies to set and delete.
func TestWorkspaceTokenNeverReadsAValue(t *testing.T) {
	ts := newSecretServer(t)
	for _, path := range []string{"/api/secrets", "/api/jobs/ja", "/api/jobs", "/api/runs/ja/spec", "/api/settings"} {
		body := get(t, ts, path)
		if strings.Contains(body, valueA) || strings.Contains(body, valueB) {
			t.Fatalf("GET %s holds a secret's value: %s", path, body)
		}
		if path == "/api/jobs/ja" && !strings.Contains(body, `${{secrets.a}}`) {
			t.Fatalf("job ja does not show its reference: %s", body)
		}
	}
	list, err := ts.admin.Secrets.List(t.Context())
	if err != nil || len(list) != 2 || list[0].Name != "a" || !equalStrings(list[0].UsedBy, []string{"ja"}) {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if _, err := ts.admin.Secrets.Set(t.Context(), "bad-name", "v"); err == nil {
		t.Fatal("a bad name was accepted")
	} else if st, _ := apiStatus(t, err); st != http.StatusBadRequest {
		t.Fatalf("bad name: status %d", st)
	}
	if st, _ := ts.raw(t, adminToken, http.MethodDelete, "/api/secrets/b", ""); st != http.StatusOK {
		t.Fatalf("delete: %d", st)
	}
	if st, _ := ts.raw(t, adminToken, http.MethodDelete, "/api/secrets/b", ""); st != http.StatusNotFound {
		t.Fatalf("delete again: %d", st)
	}
	// A job naming a secret that does not exist is refused at submit, naming the field.
	_, err = ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Command: "env",
		EnvironmentVariables: map[string]string{"B": "${{secrets.b}}"}}})
	if st, _ := apiStatus(t, err); st != http.StatusBadRequest || !strings.Contains(err.Error(), "environment_variables.B") {
		t.Fatalf("job naming a deleted secret: %v", err)
	}
}

func get(t *testing.T, ts *testServer, path string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func equalStrings(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }
