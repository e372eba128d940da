package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/store"
)

// A run's script cannot forge the logs Hangar collects: an upload into user_logs/ or
// system_logs/ (a PUT, a multipart upload) is refused before the job's own logs exist, saying
// why; an upload there stored before (an older server) is never served, listed nor handed to
// job download. A file logged under outputs/ (Azure ML users log there) is kept beside the job's
// files, and withheld from the download where the job's own file has its path.
func TestMLflowArtifactsCannotShadowCollectedLogs(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	tok := ts.ctrl.RunToken("r")
	for _, p := range []string{"user_logs/std_log.txt", "system_logs/supervisor.txt", "system_logs/node_1/x.txt", "user_logs"} {
		r := ts.mlflowDo(t, tok, http.MethodPut, artRoot+"r/artifacts/"+p, strings.NewReader("FORGED"))
		dir, _, _ := strings.Cut(p, "/")
		if r.status != http.StatusForbidden || r.errCode(t) != mlflowapi.CodePermissionDenied ||
			!strings.Contains(string(r.body), dir+"/ holds the logs Hangar collects from run r") {
			t.Errorf("PUT %s = %d %s; want 403 PERMISSION_DENIED saying %s/ is Hangar's", p, r.status, r.body, dir)
		}
	}
	r := ts.mlflowDo(t, tok, http.MethodPost, "/api/2.0/mlflow-artifacts/mpu/create/0/r/artifacts/user_logs",
		strings.NewReader(`{"path":"std_log.txt","num_parts":1}`))
	if r.status != http.StatusForbidden || r.errCode(t) != mlflowapi.CodePermissionDenied {
		t.Errorf("multipart upload into user_logs/ = %d %s; want 403", r.status, r.body)
	}
	for p, body := range map[string]string{"outputs/model.txt": "FROM MLFLOW", "outputs/plot.png": "png", "metrics.json": "{}"} {
		if r := ts.mlflowDo(t, tok, http.MethodPut, artRoot+"r/artifacts/"+p, strings.NewReader(body)); r.status != http.StatusOK {
			t.Fatalf("PUT %s = %d %s", p, r.status, r.body)
		}
	}
	// One stored by a server from before the refusal.
	h, err := ts.blobs.PutBytes([]byte("FORGED"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Tracking.PutMLflowArtifact(t.Context(), store.MLflowArtifact{RunID: "r", Path: "user_logs/std_log.txt", Hash: h, Size: 6,
		CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if r := ts.mlflowDo(t, tok, http.MethodGet, artRoot+"r/artifacts/user_logs/std_log.txt", nil); r.status != http.StatusNotFound {
		t.Errorf("GET of the old upload in user_logs/ = %d %q; want 404", r.status, r.body)
	}
	if r := ts.mlflowDo(t, tok, http.MethodGet, listPath("0/r/artifacts"), nil); strings.Contains(string(r.body), "user_logs") {
		t.Errorf("the root lists %s; want no user_logs/ before the job's logs exist", r.body)
	}

	ts.putJobArtifacts(t, "r", map[string]string{"outputs/model.txt": "weights", "user_logs/std_log.txt": "hello\n"})
	if r := ts.mlflowDo(t, tok, http.MethodGet, artRoot+"r/artifacts/user_logs/std_log.txt", nil); string(r.body) != "hello\n" {
		t.Errorf("user_logs/std_log.txt through the proxy = %d %q; want the job's", r.status, r.body)
	}
	arts, err := ts.admin.Jobs.Artifacts(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range arts.Uploaded {
		got = append(got, a.Path)
	}
	if diff := cmp.Diff([]string{"metrics.json", "outputs/plot.png"}, got); diff != "" {
		t.Errorf("uploaded files for the download (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"outputs/model.txt", "user_logs/std_log.txt"}, arts.Withheld); diff != "" {
		t.Errorf("withheld (-want +got):\n%s", diff)
	}
}
