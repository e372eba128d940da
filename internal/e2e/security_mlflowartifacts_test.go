package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// forgeLogs is a job's script that tries to lay its own copies over what Hangar collects from
// it, through the mlflow-artifacts proxy with the variables the supervisor sets: its log, the
// supervisor's log, and an output it then writes for real.
const forgeLogs = `import os, urllib.request, urllib.error

uri, token, run = os.environ["MLFLOW_TRACKING_URI"], os.environ["MLFLOW_TRACKING_TOKEN"], os.environ["MLFLOW_RUN_ID"]
root = uri + "/api/2.0/mlflow-artifacts/artifacts/0/" + run + "/artifacts/"

def put(path, data):
    req = urllib.request.Request(root + path, data=data, method="PUT")
    req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, ""
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

for p in ["user_logs/std_log.txt", "system_logs/supervisor.txt", "outputs/model.txt", "plots/loss.csv"]:
    status, body = put(p, b"FORGED\n")
    print("put", p, status, body, flush=True)
os.makedirs("outputs", exist_ok=True)
open("outputs/model.txt", "w").write("real weights")
print("the real log line", flush=True)
`

// A run uploads user_logs/std_log.txt, system_logs/supervisor.txt and outputs/model.txt through
// the MLflow artifacts API, then writes outputs/model.txt itself. The uploads into Hangar's log
// folders are refused with the reason (403 PERMISSION_DENIED), and `job download --all` holds
// Hangar's own log and the job's own output, saying which file logged through MLflow it left
// out; a file logged elsewhere (plots/) comes down beside them.
func TestSecurityMLflowArtifactsCannotForgeCollectedFiles(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"src/forge.py": forgeLogs, "job.yml": "command: python3 forge.py\ncode: src\n"})
	id := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(id, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	logs := w.logs(id)
	if d.Status != job.Completed {
		t.Fatalf("run %s: %s %s\n%s", id, d.Status, d.StatusReason, logs)
	}
	for _, want := range []string{
		"put user_logs/std_log.txt 403 ", "user_logs/ holds the logs Hangar collects from run " + id,
		"put system_logs/supervisor.txt 403 ", "system_logs/ holds the logs Hangar collects",
		"put outputs/model.txt 200", "put plots/loss.csv 200",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the run's log lacks %q:\n%s", want, logs)
		}
	}
	out := t.TempDir()
	r := w.ok("job", "download", "-n", id, "--all", "--download-path", out)
	arts := filepath.Join(out, id, "artifacts")
	if got := readFile(t, filepath.Join(arts, "user_logs", "std_log.txt")); strings.Contains(got, "FORGED") || !strings.Contains(got, "the real log line") {
		t.Errorf("downloaded user_logs/std_log.txt = %q; want Hangar's log of the run", got)
	}
	if b, err := os.ReadFile(filepath.Join(arts, "system_logs", "supervisor.txt")); err == nil && strings.Contains(string(b), "FORGED") {
		t.Errorf("downloaded system_logs/supervisor.txt is the forged one: %q", b)
	}
	if got := readFile(t, filepath.Join(arts, "outputs", "model.txt")); got != "real weights" {
		t.Errorf("downloaded outputs/model.txt = %q; want the job's own", got)
	}
	if got := readFile(t, filepath.Join(arts, "plots", "loss.csv")); got != "FORGED\n" {
		t.Errorf("downloaded plots/loss.csv (logged through MLflow) = %q", got)
	}
	if !strings.Contains(r.stderr, "logged through MLflow not downloaded") || !strings.Contains(r.stderr, "outputs/model.txt") {
		t.Errorf("job download does not say it left outputs/model.txt out:\n%s", r.stderr)
	}
}
