package e2e

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
)

// mlflowUpload is a job's script that does what MLflow's HttpArtifactRepository does, with the
// standard library (no MLflow package needed): it logs an artifact to its own run through the
// mlflow-artifacts proxy with the variables the supervisor sets, lists it back, and tries
// another run.
const mlflowUpload = `import json, os, urllib.request, urllib.error

uri, token = os.environ["MLFLOW_TRACKING_URI"], os.environ["MLFLOW_TRACKING_TOKEN"]
run, exp = os.environ["MLFLOW_RUN_ID"], os.environ.get("MLFLOW_EXPERIMENT_NAME")
print("tracking", uri.startswith("http://"), "run", run, "experiment", exp, flush=True)
root = uri + "/api/2.0/mlflow-artifacts/artifacts/0/" + run + "/artifacts"

def call(method, url, data=None, auth=True):
    req = urllib.request.Request(url, data=data, method=method)
    if auth:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

print("upload", call("PUT", root + "/plots/loss.csv", b"step,loss\n1,0.5\n")[0], flush=True)
status, body = call("GET", uri + "/api/2.0/mlflow-artifacts/artifacts?path=0%2F" + run + "%2Fartifacts%2Fplots")
print("list", status, body.strip(), flush=True)
print("no token", call("PUT", root + "/x.txt", b"x", auth=False)[0], flush=True)
other = uri + "/api/2.0/mlflow-artifacts/artifacts/0/" + os.environ["OTHER_RUN"] + "/artifacts/pwned.txt"
print("other run", call("PUT", other, b"x")[0], flush=True)
os.makedirs("outputs", exist_ok=True)
open("outputs/model.txt", "w").write("weights")
`

// A job's script sees the MLflow variables, uploads an artifact through the proxy with them
// (its token reaches its own run only), and the workspace sees the file beside the job's own
// outputs, which `hangar job download` gets.
func TestMLflowArtifactsFromJob(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"src/upload.py": mlflowUpload,
		"other.yml":     "command: echo other\n",
	})
	other := w.create(filepath.Join(dir, "other.yml"))
	writeFiles(t, dir, map[string]string{"job.yml": "command: python3 upload.py\ncode: src\nexperiment_name: e2e-mlflow\n" +
		"environment_variables: {OTHER_RUN: " + other + "}\n"})
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	logs := w.logs(name)
	if d.Status != job.Completed {
		t.Fatalf("job %s: %s\n%s", name, d.Status, logs)
	}
	for _, want := range []string{
		"tracking True run " + name + " experiment e2e-mlflow",
		"upload 200",
		`list 200 {"files":[{"path":"loss.csv","is_dir":false,"file_size":16}]}`,
		"no token 401",
		"other run 403",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}

	si, err := home.Home{Dir: w.home}.ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := home.Home{Dir: w.home}.ReadToken()
	if err != nil {
		t.Fatal(err)
	}
	get := func(target string) string {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, si.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", target, resp.StatusCode, b)
		}
		return strings.TrimSpace(string(b))
	}
	root := "/api/2.0/mlflow-artifacts/artifacts/0/" + name + "/artifacts"
	if got := get(root + "/plots/loss.csv"); got != "step,loss\n1,0.5" {
		t.Errorf("the uploaded file = %q", got)
	}
	if got := get(root + "/outputs/model.txt"); got != "weights" {
		t.Errorf("the job's output through the proxy = %q", got)
	}
	list := get("/api/2.0/mlflow-artifacts/artifacts?" + url.Values{"path": {"0/" + name + "/artifacts"}}.Encode())
	for _, want := range []string{`{"path":"outputs","is_dir":true}`, `{"path":"plots","is_dir":true}`} {
		if !strings.Contains(list, want) {
			t.Errorf("artifact root lists %s, lacks %s", list, want)
		}
	}
	if got := get("/api/2.0/mlflow-artifacts/artifacts?" + url.Values{"path": {"0/" + other + "/artifacts"}}.Encode()); strings.Contains(got, "pwned") {
		t.Errorf("the other run's artifacts = %s: the job wrote there", got)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--download-path", out)
	if got := readFile(t, filepath.Join(out, name, "artifacts", "outputs", "model.txt")); got != "weights" {
		t.Errorf("job download: outputs/model.txt = %q", got)
	}
	// What the script logged through MLflow comes down beside the job's own files.
	if got := readFile(t, filepath.Join(out, name, "artifacts", "plots", "loss.csv")); got != "step,loss\n1,0.5\n" {
		t.Errorf("job download: the file logged through MLflow, plots/loss.csv = %q", got)
	}
}
