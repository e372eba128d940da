package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/job"
)

const connPassword = "pg-password-5e1d7a"

// A connection's credentials come back only to the live import run that reads it: never in
// show or list, never to another run's token or the workspace token, not after the run ended;
// they survive a key rotation; a connection a live import reads is not deleted.
func TestConnectionCredentialsOnlyToTheLiveImportRun(t *testing.T) {
	ts := newSecretServer(t) // sealing on; jobs ja, jb, jn
	ctx := t.Context()
	c, err := ts.admin.Connections.Create(ctx, api.CreateConnectionRequest{
		Connection:  connection.Connection{Name: "sales_db", Type: connection.TypePostgreSQL, Target: "postgresql://db.internal:5432/sales"},
		Credentials: connection.Credentials{Type: connection.CredUsernamePassword, Username: "reader", Password: connPassword}})
	if err != nil || c.CredentialType != connection.CredUsernamePassword {
		t.Fatalf("create = %+v, %v", c, err)
	}
	for _, path := range []string{"/api/connections", "/api/connections/sales_db"} {
		body := getBody(t, ts.url+path)
		if strings.Contains(body, connPassword) || !strings.Contains(body, "username_password") {
			t.Errorf("GET %s answered %s", path, body)
		}
	}
	imp := dataset.ImportSpec{Name: "orders", Type: dataset.MLTable, Path: "azureml://datastores/workspaceblobstore/paths/pg/${{name}}",
		Source: dataset.ImportSource{Type: dataset.SourceDatabase, Query: "select 1", Connection: "sales_db"}}
	d, err := ts.admin.Connections.Import(ctx, api.DataImportRequest{Spec: imp})
	if err != nil || d.Spec.Import == nil || d.Spec.Import.Version != "1" || d.Spec.Outputs[job.ImportOutput].Path != "azureml://datastores/workspaceblobstore/paths/pg/orders" {
		t.Fatalf("import = %+v, %v", d, err)
	}
	run := d.ID
	if got, err := ts.runClient(run).Runs.ConnectionCredentials(ctx, run); err != nil || got.Credentials.Password != connPassword || got.Target != "postgresql://db.internal:5432/sales" {
		t.Fatalf("the import's own token: %+v, %v", got, err)
	}
	if _, err := ts.runClient("jn").Runs.ConnectionCredentials(ctx, run); err == nil {
		t.Fatal("another run's token read the import's connection")
	} else if st, _ := apiStatus(t, err); st != http.StatusForbidden {
		t.Fatalf("another run's token: status %d, want 403", st)
	}
	if _, err := ts.runClient("jn").Runs.ConnectionCredentials(ctx, "jn"); err == nil {
		t.Fatal("a run that imports nothing got a connection")
	}
	for _, tok := range []string{adminToken, "", "hrt1.forged"} {
		if st, _ := ts.raw(t, tok, http.MethodGet, "/api/runs/"+run+"/connection-credentials", ""); st/100 == 2 {
			t.Fatalf("token %q read the import's connection", tok)
		}
	}
	// Another import of the name while this one runs takes the next version.
	if d2, err := ts.admin.Connections.Import(ctx, api.DataImportRequest{Spec: imp}); err != nil || d2.Spec.Import.Version != "2" {
		t.Fatalf("second import = %+v, %v", d2, err)
	}
	if _, err := ts.admin.Connections.Delete(ctx, "sales_db"); err == nil {
		t.Fatal("deleted a connection a live import reads")
	} else if st, _ := apiStatus(t, err); st != http.StatusConflict || !strings.Contains(err.Error(), run) {
		t.Fatalf("delete while read: %d %v", st, err)
	}
	if _, err := ts.admin.Secrets.RotateKey(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := ts.runClient(run).Runs.ConnectionCredentials(ctx, run); err != nil || got.Credentials.Password != connPassword {
		t.Fatalf("after the key's rotation: %+v, %v", got, err)
	}
	// The run ends (canceled: its supervisor says so once it stopped).
	if d, err := ts.admin.Jobs.Cancel(ctx, run); err != nil {
		t.Fatal(err)
	} else if !d.Status.Terminal() {
		if _, err := ts.runClient(run).Runs.ReportStatus(ctx, run, api.StatusReport{State: job.Canceled}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ts.runClient(run).Runs.ConnectionCredentials(ctx, run); err == nil {
		t.Fatal("an ended import still reads its connection")
	}
}

// What a data import is refused for, with the file's field paths.
func TestDataImportRefusals(t *testing.T) {
	ts := newSecretServer(t)
	ctx := t.Context()
	if _, err := ts.admin.Connections.Create(ctx, api.CreateConnectionRequest{
		Connection:  connection.Connection{Name: "raw", Type: connection.TypeS3, Target: "http://127.0.0.1:9000/raw"},
		Credentials: connection.Credentials{Type: connection.CredAccessKey, AccessKeyID: "k", SecretAccessKey: "s"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.admin.Connections.Create(ctx, api.CreateConnectionRequest{
		Connection: connection.Connection{Name: "sf", Type: "snowflake", Target: "jdbc:snowflake://x"}}); err == nil {
		t.Fatal("a snowflake connection was created")
	}
	db := dataset.ImportSource{Type: dataset.SourceDatabase, Query: "select 1"}
	for _, tc := range []struct {
		src  string
		want string
	}{
		{"nope", "source.connection: no connection named nope in this workspace (known: raw)"},
		{"raw", "source.connection: connection raw is of type s3; a database source reads a postgresql connection"},
	} {
		src := db
		src.Connection = tc.src
		_, err := ts.admin.Connections.Import(ctx, api.DataImportRequest{Spec: dataset.ImportSpec{Name: "t", Type: dataset.MLTable,
			Path: "azureml://datastores/workspaceblobstore/paths/x", Source: src}})
		if st, _ := apiStatus(t, err); st != http.StatusBadRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("import from %s: %d %v; want %q", tc.src, st, err, tc.want)
		}
	}
	// A file_system import reads the connection's bucket at the path, resolved at create.
	d, err := ts.admin.Connections.Import(ctx, api.DataImportRequest{Spec: dataset.ImportSpec{Name: "files", Type: dataset.URIFolder,
		Path:   "azureml://datastores/workspaceblobstore/paths/s3/${{name}}",
		Source: dataset.ImportSource{Type: dataset.SourceFileSystem, Path: "myfiles/titanic.csv", Connection: "raw"}}})
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Spec.Import.Store; st == nil || st.Container != "raw" || st.Endpoint != "http://127.0.0.1:9000" || st.Path != "myfiles/titanic.csv" {
		t.Errorf("file_system import's store = %+v", st)
	}
	// A job file cannot make itself an import.
	_, err = ts.admin.Jobs.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "true", Import: &job.Import{Connection: "raw"}}})
	if st, _ := apiStatus(t, err); st != http.StatusBadRequest || !strings.Contains(err.Error(), "import: set by hangar data import only") {
		t.Errorf("job with import: %d %v", st, err)
	}
}

// getBody is the body of a GET with the workspace token.
func getBody(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
