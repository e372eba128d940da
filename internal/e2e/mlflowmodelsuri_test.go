package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// mlflowLoad is a job's script that loads models:/ URIs as MLflow's client does
// (get_model_name_and_version, get-download-uri, then HttpArtifactRepository's listing and
// downloads), with the standard library and the job's own token: no MLflow package needed.
const mlflowLoad = `import json, os, urllib.parse, urllib.request, urllib.error

uri, token = os.environ["MLFLOW_TRACKING_URI"], os.environ["MLFLOW_TRACKING_TOKEN"]

def call(method, path, body=None, query=None, raw=None):
    url = uri + path + ("?" + urllib.parse.urlencode(query) if query else "")
    data = json.dumps(body).encode() if body is not None else raw
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()

def api(method, path, body=None, query=None):
    status, b = call(method, "/api/2.0/mlflow/" + path, body, query)
    assert status == 200, (path, status, b)
    return json.loads(b)

def version_of(name, suffix):
    if suffix.startswith("@"):
        return api("GET", "registered-models/alias", query={"name": name, "alias": suffix[1:]})["model_version"]["version"]
    if suffix.isdigit():
        return suffix
    body = {"name": name} if suffix.lower() == "latest" else {"name": name, "stages": [suffix]}
    vs = api("POST", "registered-models/get-latest-versions", body)["model_versions"]
    return str(max(int(v["version"]) for v in vs))

def load(model_uri):
    name, _, suffix = model_uri[len("models:/"):].partition("/")
    if "@" in name:
        name, suffix = name.split("@", 1)
        suffix = "@" + suffix
    version = version_of(name, suffix)
    root = api("GET", "model-versions/get-download-uri", query={"name": name, "version": version})["artifact_uri"]
    root = root[len("mlflow-artifacts:/"):]
    print(model_uri, "->", root, flush=True)
    def walk(rel):
        p = root + ("/" + rel if rel else "")
        status, b = call("GET", "/api/2.0/mlflow-artifacts/artifacts", query={"path": p})
        assert status == 200, (p, status, b)
        for f in sorted(json.loads(b).get("files", []), key=lambda f: f["path"]):
            sub = (rel + "/" if rel else "") + f["path"]
            if f["is_dir"]:
                walk(sub)
                continue
            status, content = call("GET", "/api/2.0/mlflow-artifacts/artifacts/" + root + "/" + sub)
            print("file", model_uri, sub, status, content.decode().strip(), flush=True)
    walk("")
    return root

load("models:/iris@champion")
root = load("models:/iris/latest")
status, b = call("PUT", "/api/2.0/mlflow-artifacts/artifacts/" + root + "/model.pkl", raw=b"forged")
print("put", status, json.loads(b)["error_code"], flush=True)
`

// A job's script loads registered models through models:/ URIs with its run's token, as
// mlflow.pyfunc.load_model does from inside an Azure ML job: a version uploaded by `hangar model
// create` and one taken from a job's named output, by alias and by latest; the bytes are the
// versions', and the script cannot change them.
func TestMLflowModelsURIFromJob(t *testing.T) {
	requireTool(t, "python3")
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"iris/MLmodel":        "flavors: {python_function: {}}\n",
		"iris/model.pkl":      "uploaded weights\n",
		"iris/env/conda.yaml": "name: env\n",
		"train.yml":           "command: >-\n  mkdir -p ${{outputs.model}} && echo 'flavors: {}' > ${{outputs.model}}/MLmodel &&\n  echo trained weights > ${{outputs.model}}/model.pkl\noutputs:\n  model: {type: mlflow_model}\n",
		"src/load.py":         mlflowLoad,
		"load.yml":            "command: python3 load.py\ncode: src\n",
	})
	w.ok("model", "create", "--name", "iris", "--type", "mlflow_model", "--path", filepath.Join(dir, "iris"))
	train := w.create(filepath.Join(dir, "train.yml"))
	if r := w.run("job", "stream", "-n", train); r.code != 0 {
		t.Fatalf("training job: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	w.ok("model", "create", "--name", "iris", "--type", "mlflow_model", "--path", "azureml://jobs/"+train+"/outputs/model")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.url()+"/api/2.0/mlflow/registered-models/alias",
		strings.NewReader(`{"name": "iris", "alias": "champion", "version": "1"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+w.adminToken())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("set alias: %s", resp.Status)
	}

	name := w.create(filepath.Join(dir, "load.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	logs := w.logs(name)
	if d.Status != job.Completed {
		t.Fatalf("job %s: %s\n%s", name, d.Status, logs)
	}
	for _, want := range []string{
		"models:/iris@champion -> registered-models/iris/1",
		"file models:/iris@champion MLmodel 200 flavors: {python_function: {}}",
		"file models:/iris@champion env/conda.yaml 200 name: env",
		"file models:/iris@champion model.pkl 200 uploaded weights",
		"models:/iris/latest -> registered-models/iris/2",
		"file models:/iris/latest model.pkl 200 trained weights",
		"put 403 PERMISSION_DENIED",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
}
