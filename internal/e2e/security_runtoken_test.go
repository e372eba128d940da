package e2e

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
)

// A job hands its run token out (writes $HANGAR_RUN_TOKEN to outputs/). Once the run Completed,
// whoever downloads that output tries, within the grace the token keeps after the end, to
// rewrite the run through the MLflow routes (a batch of metrics, params and tags, the run's name,
// a tag, a new artifact, runs/delete) and the native ones (a log line). Each is refused as the
// native routes refuse it: 409, "run <id> ended (Completed) at <time>: its record can no longer
// change" (in MLflow's error shape on MLflow's paths), and job show and runs/get show the run as
// it ended.
func TestSecurityFinishedRunTokenRewritesNothing(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": `command: >-
  echo "$HANGAR_RUN_TOKEN" > outputs/token.txt;
  echo '{"name": "acc", "value": 0.5}' >> "$HANGAR_METRICS_FILE";
  echo done
display_name: honest
`})
	id := w.create(filepath.Join(dir, "job.yml"))
	if d := w.waitStatus(id, 2*time.Minute, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed {
		t.Fatalf("run %s: %s %s", id, d.Status, d.StatusReason)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", id, "--download-path", out)
	tok := strings.TrimSpace(readFile(t, filepath.Join(out, id, "artifacts", "outputs", "token.txt")))
	if tok == "" {
		t.Fatal("the run wrote no token to outputs/token.txt")
	}
	admin := w.client()
	u, hc := admin.BaseURL(), admin.HTTPClient()
	mlflow := "/api/2.0/mlflow/"
	attacks := []struct{ method, path, body string }{
		{"POST", mlflow + "runs/log-batch", `{"run_id":"` + id + `","metrics":[{"key":"acc","value":1.0,"timestamp":1,"step":0}],` +
			`"params":[{"key":"lr","value":"forged"}],"tags":[{"key":"verdict","value":"forged"}]}`},
		{"POST", mlflow + "runs/update", `{"run_id":"` + id + `","run_name":"forged"}`},
		{"POST", mlflow + "runs/log-metric", `{"run_id":"` + id + `","key":"acc","value":1.0,"timestamp":2}`},
		{"POST", mlflow + "runs/set-tag", `{"run_id":"` + id + `","key":"verdict","value":"forged"}`},
		{"POST", mlflow + "runs/delete", `{"run_id":"` + id + `"}`},
		{"PUT", "/api/2.0/mlflow-artifacts/artifacts/0/" + id + "/artifacts/forged.txt", "forged"},
		{"POST", "/api/runs/" + id + "/logs", `{"file":"std_log.txt","lines":[{"seq":99,"text":"FORGED"}]}`},
	}
	for _, a := range attacks {
		st, body := call(t, hc, a.method, u+a.path, tok, a.body)
		want := []string{"run " + id + " ended (Completed) at ", ": its record can no longer change"}
		if strings.HasPrefix(a.path, "/api/2.0/mlflow") {
			want = append(want, `"error_code":"RESOURCE_CONFLICT"`)
		}
		if st != http.StatusConflict || !containsAll(body, want) {
			t.Errorf("%s %s with the finished run's token = %d %s; want 409 with %q", a.method, a.path, st, body, want)
		}
	}
	d := w.show(id)
	if d.DisplayName != "honest" || d.Metrics["acc"] != 0.5 || d.Params["lr"] != "" || d.Tags["verdict"] != "" {
		t.Errorf("job show after the attack: name %q, metrics %v, params %v, tags %v; want the run as it ended",
			d.DisplayName, d.Metrics, d.Params, d.Tags)
	}
	if l := w.logs(id); strings.Contains(l, "FORGED") {
		t.Errorf("the run's log holds the forged line:\n%s", l)
	}
	st, body := call(t, hc, "GET", u+mlflow+"runs/get?run_id="+id, adminToken(t, w), "")
	if st != http.StatusOK || !strings.Contains(body, `"lifecycle_stage":"active"`) || strings.Contains(body, "forged") {
		t.Errorf("runs/get after the attack = %d %s; want the run active and as it ended", st, body)
	}
	arts, err := admin.Jobs.Artifacts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arts.Uploaded {
		if a.Path == "forged.txt" {
			t.Errorf("the forged artifact was stored: %+v", a)
		}
	}
}

// call sends one request with a bearer token and returns the status and the body.
func call(t *testing.T, hc *http.Client, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// adminToken is the workspace token the CLI uses.
func adminToken(t *testing.T, w *ws) string {
	t.Helper()
	if tok := w.envValue("HANGAR_TOKEN"); tok != "" {
		return tok
	}
	tok, err := home.Home{Dir: w.home}.ReadToken()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
