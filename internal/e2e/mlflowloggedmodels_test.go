package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// mlflowLogModel is a job's script that sends what MLflow 3's mlflow.sklearn.log_model sends
// from inside a run (exchanges of docs/mlflow.md "Logged models"), with the standard library
// (no MLflow package here): create the logged model, record it as the run's output, upload its
// files to its artifact_uri through the proxy, link a metric, finalize it READY.
const mlflowLogModel = `import json, os, urllib.request

uri, token, run = os.environ["MLFLOW_TRACKING_URI"], os.environ["MLFLOW_TRACKING_TOKEN"], os.environ["MLFLOW_RUN_ID"]

def call(method, path, body=None, data=None):
    if body is not None:
        data = json.dumps(body).encode()
    req = urllib.request.Request(uri + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req) as resp:
        return json.loads(resp.read() or b"{}")

exp = call("GET", "/api/2.0/mlflow/runs/get?run_id=" + run)["run"]["info"]["experiment_id"]
model = call("POST", "/api/2.0/mlflow/logged-models", {"experiment_id": exp, "name": "model", "source_run_id": run,
    "params": [{"key": "C", "value": "1.0"}]})["model"]["info"]
mid = model["model_id"]
call("POST", "/api/2.0/mlflow/runs/outputs", {"run_id": run, "models": [{"model_id": mid, "step": 0}]})
root = "/api/2.0/mlflow-artifacts/artifacts/" + model["artifact_uri"][len("mlflow-artifacts:/"):]
call("PUT", root + "/MLmodel", data=b"flavors:\n  python_function: {loader_module: mlflow.sklearn}\nmodel_id: " + mid.encode() + b"\n")
call("PUT", root + "/model.pkl", data=bytes(range(256)))
call("POST", "/api/2.0/mlflow/runs/log-metric", {"run_id": run, "key": "acc", "value": 0.9, "timestamp": 1, "step": 0, "model_id": mid})
status = call("PATCH", "/api/2.0/mlflow/logged-models/" + mid, {"model_id": mid, "status": "LOGGED_MODEL_READY"})["model"]["info"]["status"]
print("logged model", mid, status, flush=True)
`

// A job logs an MLflow 3 model: hangar job show lists it, and hangar job download brings its
// files, byte for byte, under artifacts/models/<model_id>/.
func TestMLflowLoggedModelFromJob(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"src/log_model.py": mlflowLogModel,
		"job.yml": "command: python3 log_model.py\ncode: src\nexperiment_name: e2e-logged-models\n"})
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	logs := w.logs(name)
	m := regexp.MustCompile(`logged model (m-[0-9a-f]{32}) LOGGED_MODEL_READY`).FindStringSubmatch(logs)
	if d.Status != job.Completed || m == nil {
		t.Fatalf("job %s: %s\n%s", name, d.Status, logs)
	}
	id := m[1]
	show := w.ok("job", "show", name).stdout
	if !strings.Contains(show, "Logged models:") || !strings.Contains(show, id+"  model  READY  2 files") {
		t.Errorf("job show lacks the logged model %s:\n%s", id, show)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--download-path", out)
	got := readFile(t, filepath.Join(out, name, "artifacts", "models", id, "model.pkl"))
	want := make([]byte, 256)
	for i := range want {
		want[i] = byte(i)
	}
	if got != string(want) {
		t.Errorf("job download: models/%s/model.pkl = %q, want the 256 bytes uploaded", id, got)
	}
	if got := readFile(t, filepath.Join(out, name, "artifacts", "models", id, "MLmodel")); !strings.Contains(got, "model_id: "+id) {
		t.Errorf("job download: MLmodel = %q", got)
	}
	// Registered by its id, as mlflow.register_model("models:/<id>") does: the same files.
	w.ok("model", "create", "-n", "iris", "--type", "mlflow_model", "-p", "models:/"+id)
	models := t.TempDir()
	w.ok("model", "download", "iris:1", "--download-path", models)
	if got := readFile(t, filepath.Join(models, "iris", "model.pkl")); got != string(want) {
		t.Errorf("model download iris:1: model.pkl = %q, want the logged model's", got)
	}
}
