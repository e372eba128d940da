package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// aliasTrain trains iris with scikit-learn, saves the model as mlflow.sklearn.log_model lays it
// out (there is no mlflow package here), and registers it from inside the job the way MLflow's
// Python client 2.x does for log_model(..., registered_model_name=...): the exact exchanges of
// its REST stores (/work/notes/issue30/exchanges.md §0, §6c), replayed with the standard library
// and the job's own MLFLOW_TRACKING_URI, MLFLOW_TRACKING_TOKEN and MLFLOW_RUN_ID. Labels are
// offset by --offset, so that each version's answers say which version gave them.
const aliasTrain = `import argparse, csv, json, mimetypes, os, pickle, time
import urllib.error, urllib.parse, urllib.request
import sklearn
from sklearn.linear_model import LogisticRegression

p = argparse.ArgumentParser()
p.add_argument("--data"); p.add_argument("--offset", type=int); p.add_argument("--name")
a = p.parse_args()
cols = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
X, y, species = [], [], {}
with open(a.data) as f:
    for r in csv.DictReader(f):
        X.append([float(r[c]) for c in cols])
        y.append(species.setdefault(r["species"], len(species)) + a.offset)
model = LogisticRegression(max_iter=1000).fit(X, y)
rows = [[5.1, 3.5, 1.4, 0.2], [6.0, 2.9, 4.5, 1.5], [6.9, 3.1, 5.4, 2.1]]
print("PREDICTIONS", json.dumps([int(v) for v in model.predict(rows)]), flush=True)

os.makedirs("model")
with open("model/model.pkl", "wb") as f:
    pickle.dump(model, f)
inputs = json.dumps([{"type": "double", "name": c, "required": True} for c in cols])
outputs = json.dumps([{"type": "tensor", "tensor-spec": {"dtype": "int64", "shape": [-1]}}])
flavors = {"python_function": {"env": {"conda": "conda.yaml", "virtualenv": "python_env.yaml"},
                               "loader_module": "mlflow.sklearn", "model_path": "model.pkl",
                               "predict_fn": "predict", "python_version": "3.11.2"},
           "sklearn": {"code": None, "pickled_model": "model.pkl", "serialization_format": "pickle",
                       "sklearn_version": sklearn.__version__}}
with open("model/MLmodel", "w") as f:
    f.write("artifact_path: model\nflavors:\n  python_function:\n    env:\n      conda: conda.yaml\n"
            "      virtualenv: python_env.yaml\n    loader_module: mlflow.sklearn\n    model_path: model.pkl\n"
            "    predict_fn: predict\n    python_version: 3.11.2\n  sklearn:\n    code: null\n"
            "    pickled_model: model.pkl\n    serialization_format: pickle\n"
            f"    sklearn_version: {sklearn.__version__}\nmlflow_version: 2.20.1\n"
            f"signature:\n  inputs: '{inputs}'\n  outputs: '{outputs}'\n")
with open("model/conda.yaml", "w") as f:
    f.write(f"dependencies:\n- python=3.11.2\n- pip:\n  - scikit-learn=={sklearn.__version__}\nname: mlflow-env\n")
with open("model/requirements.txt", "w") as f:
    f.write(f"scikit-learn=={sklearn.__version__}\n")

URI, RUN = os.environ["MLFLOW_TRACKING_URI"].rstrip("/"), os.environ["MLFLOW_RUN_ID"]
HEADERS = {"User-Agent": "mlflow-python-client/2.20.1", "X-MLflow-Client-Version": "2.20.1",
           "Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"]}

def send(method, url, data=None, ctype=None):
    h = dict(HEADERS)
    if ctype:
        h["Content-Type"] = ctype
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")

def call(method, path, body):
    # RU call_endpoint: a GET's fields are the query (repeated keys for lists), else a JSON body.
    url = URI + "/api/2.0/mlflow/" + path
    if method == "GET":
        return send(method, url + "?" + urllib.parse.urlencode(body, doseq=True))
    return send(method, url, json.dumps(body).encode(), "application/json")

def must(what, answer, *ok):
    status, body = answer
    if status != 200 and body.get("error_code") not in ok:
        raise SystemExit(f"{what}: {status} {body}")
    return body

# Model.log: the run's artifact URI, every file PUT through the artifact proxy, then runs/log-model.
art = must("runs/get", call("GET", "runs/get", {"run_id": RUN}))["run"]["info"]["artifact_uri"]
base = URI + "/api/2.0/mlflow-artifacts/artifacts/" + art[len("mlflow-artifacts:/"):].lstrip("/")
for name in sorted(os.listdir("model")):
    with open(os.path.join("model", name), "rb") as f:
        ctype = mimetypes.guess_type(name)[0] or "application/octet-stream"
        must("upload " + name, send("PUT", base + "/model/" + name, f.read(), ctype))
call("POST", "runs/log-model", {"run_id": RUN, "model_json": json.dumps(
    {"artifact_path": "model", "flavors": flavors, "run_id": RUN,
     "utc_time_created": time.strftime("%Y-%m-%d %H:%M:%S.000000")})})  # its errors are swallowed
# mlflow.register_model("runs:/<run>/model", name): the name (taken is fine), the run's
# underlying URI, the version, and the wait while it is PENDING_REGISTRATION.
must("registered-models/create", call("POST", "registered-models/create", {"name": a.name}), "RESOURCE_ALREADY_EXISTS")
art = must("runs/get", call("GET", "runs/get", {"run_id": RUN}))["run"]["info"]["artifact_uri"]
mv = must("model-versions/create", call("POST", "model-versions/create",
          {"name": a.name, "source": art + "/model", "run_id": RUN}))["model_version"]
while mv["status"] == "PENDING_REGISTRATION":
    time.sleep(1)
    mv = must("model-versions/get", call("GET", "model-versions/get", {"name": a.name, "version": mv["version"]}))["model_version"]
print("REGISTERED", a.name, mv["version"], mv["status"], flush=True)
`

// The model's whole life, as issue 30 tells it: a job trains iris on local and registers the
// model from inside through MLflow's registry protocol; the model's champion alias is set; a
// deployment of azureml:iris@champion with no scoring script answers MLflow's and Azure's
// payloads; a second job registers version 2, the alias moves while a client calls the endpoint
// without pause, no request fails, and the answers come from version 2 once the deployment has
// rolled. The same deployment on a managed cluster (a pool of local agents, its replicas placed
// there) answers both payloads and follows the same move under the same load. With the alias
// deleted the deployment keeps serving, and says so.
func TestModelAliasDeploymentFollowsPromotion(t *testing.T) {
	requireTool(t, "python3")
	requireSklearn(t)
	w := newWSEnv(t, []string{"PATH=" + debianPython(t) + string(os.PathListSeparator) + os.Getenv("PATH")})
	dir := t.TempDir()
	jobFile := func(offset int) string {
		return "command: python3 train.py --data ${{inputs.iris}} --name iris --offset " + fmt.Sprint(offset) + "\n" +
			"code: src\ncompute: azureml:local\nexperiment_name: iris-alias\n" +
			"environment: azureml://registries/azureml/environments/sklearn-1.5/labels/latest\n" +
			"inputs:\n  iris: {type: uri_file, path: ./iris.csv, mode: download}\n"
	}
	writeFiles(t, dir, map[string]string{
		"src/train.py": aliasTrain,
		"iris.csv":     readFile(t, filepath.Join(repoRoot(t), "examples", "iris", "data", "iris.csv")),
		"train1.yml":   jobFile(0),
		"train2.yml":   jobFile(10),
		"endpoint.yml": "name: iris-ep\nauth_mode: key\n",
		"champion.yml": "name: champ\nendpoint_name: iris-ep\nmodel: azureml:iris@champion\ninstance_count: 1\n" +
			"request_settings: {request_timeout_ms: 3000, max_concurrent_requests_per_instance: 8}\n",
		"cluster.yml":       "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n",
		"pool-endpoint.yml": "name: iris-pool\nauth_mode: key\n",
		"pool-champion.yml": "name: champ\nendpoint_name: iris-pool\nmodel: azureml:iris@champion\ninstance_count: 1\ncompute: azureml:pool\n" +
			"request_settings: {request_timeout_ms: 3000, max_concurrent_requests_per_instance: 8}\n",
	})
	// The pool's second node is the roll's: the new version's replica starts beside the old one
	// (a pool at its max_instances would keep it queued, and the old version serving, until a
	// node is free).
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	train := func(file string, version string) []int {
		t.Helper()
		name := w.create(filepath.Join(dir, file))
		d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
		logs := w.logs(name)
		if d.Status != job.Completed || !strings.Contains(logs, "REGISTERED iris "+version+" READY") {
			t.Fatalf("job %s: %s (%s); want it to register iris version %s\n%s", name, d.Status, d.StatusReason, version, logs)
		}
		m := regexp.MustCompile(`PREDICTIONS (\[.*\])`).FindStringSubmatch(logs)
		var preds []int
		if m == nil || json.Unmarshal([]byte(m[1]), &preds) != nil {
			t.Fatalf("job %s printed no predictions:\n%s", name, logs)
		}
		return preds
	}
	v1 := train("train1.yml", "1")
	w.ok("model", "alias", "set", "iris", "champion", "1")

	// A missing alias is refused, naming the field; then the champion is deployed with no code.
	writeFiles(t, dir, map[string]string{"missing.yml": strings.Replace(readFile(t, filepath.Join(dir, "champion.yml")), "@champion", "@challenger", 1)})
	w.ok("online-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"))
	if r := w.run("online-deployment", "create", "-f", filepath.Join(dir, "missing.yml")); r.code == 0 ||
		!strings.Contains(r.stderr, "model: model iris has no alias challenger (its aliases: champion → 1") {
		t.Errorf("a deployment of a missing alias: exit %d, %s", r.code, r.stderr)
	}
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "champion.yml"), "--all-traffic")
	s := w.scorer("iris-ep")
	cols := []string{"sepal_length", "sepal_width", "petal_length", "petal_width"}
	rows := [][]float64{{5.1, 3.5, 1.4, 0.2}, {6.0, 2.9, 4.5, 1.5}, {6.9, 3.1, 5.4, 2.1}}
	split := mustJSON(map[string]any{"dataframe_split": map[string]any{"columns": cols, "data": rows}})
	azure := mustJSON(map[string]any{"input_data": map[string]any{"columns": cols, "index": []int{0, 1, 2}, "data": rows}})
	for _, tc := range []struct{ name, body, want string }{
		{"dataframe_split", split, mustJSON(map[string]any{"predictions": v1})},
		{"Azure input_data", azure, mustJSON(v1)},
	} {
		if code, got := s.send(t, "application/json", tc.body); code != http.StatusOK || !jsonEqual(t, got, tc.want) {
			t.Fatalf("%s: %d %s; want %s (version 1's own predictions)", tc.name, code, got, tc.want)
		}
	}
	show := w.ok("online-deployment", "show", "-n", "champ", "-e", "iris-ep").stdout
	if !strings.Contains(show, "Follows:     alias champion of model iris (it names version 1); serving version 1") {
		t.Errorf("online-deployment show:\n%s", show)
	}

	// The same deployment of the alias on a managed cluster (Hangar's pool of local agents).
	w.ok("online-endpoint", "create", "-f", filepath.Join(dir, "pool-endpoint.yml"))
	if r := w.run("online-deployment", "create", "-f", filepath.Join(dir, "pool-champion.yml"), "--all-traffic", "--timeout", "3m"); r.code != 0 {
		logs := w.run("online-deployment", "get-logs", "-n", "champ", "-e", "iris-pool")
		t.Fatalf("create on the cluster: exit %d\n%s\nthe replica's log:\n%s%s", r.code, r.stderr, logs.stdout, logs.stderr)
	}
	checkReplicasOn(t, w, "iris-pool", "champ", "pool")
	sp := w.scorer("iris-pool")
	for _, tc := range []struct{ name, body, want string }{
		{"dataframe_split", split, mustJSON(map[string]any{"predictions": v1})},
		{"Azure input_data", azure, mustJSON(v1)},
	} {
		if code, got := sp.send(t, "application/json", tc.body); code != http.StatusOK || !jsonEqual(t, got, tc.want) {
			t.Fatalf("on the cluster, %s: %d %s; want %s (version 1's own predictions)", tc.name, code, got, tc.want)
		}
	}

	v2 := train("train2.yml", "2")
	want1, want2 := mustJSON(map[string]any{"predictions": v1}), mustJSON(map[string]any{"predictions": v2})
	loads := map[string]*aliasLoad{"iris-ep": startAliasLoad(t, s, split, want1, want2), "iris-pool": startAliasLoad(t, sp, split, want1, want2)}
	w.ok("model", "alias", "set", "iris", "champion", "2")
	c := w.client()
	for ep, l := range loads {
		testwait.Within(t, time.Minute, ep+"'s deployment to roll to version 2 and answer from it", func() bool {
			v, err := c.Deployments.Get(t.Context(), ep, "champ")
			return err == nil && v.Generation == 2 && v.Model.Version == "2" && v.ProvisioningState == "Succeeded" &&
				l.fromV2.Load() > 0 && l.lastV2.Load()
		})
	}
	for ep, l := range loads {
		before := l.fromV2.Load()
		testwait.Within(t, 30*time.Second, "more answers from version 2 on "+ep, func() bool { return l.fromV2.Load() >= before+20 })
	}
	for ep, l := range loads {
		l.stopAndWait()
		if l.failed.Load() > 0 || l.served.Load() == 0 {
			t.Errorf("%s: the alias moved under load: %d failed (first: %v), %d served", ep, l.failed.Load(), l.firstFailure.Load(), l.served.Load())
		}
	}
	for ep, sc := range map[string]*scorer{"iris-ep": s, "iris-pool": sp} {
		if code, got := sc.send(t, "application/json", azure); code != http.StatusOK || !jsonEqual(t, got, mustJSON(v2)) {
			t.Errorf("%s after the roll, Azure input_data: %d %s; want version 2's %v", ep, code, got, v2)
		}
	}
	checkReplicasOn(t, w, "iris-pool", "champ", "pool")

	// The alias deleted: it keeps serving version 2, and show says why.
	w.ok("model", "alias", "delete", "iris", "champion")
	var v *api.DeploymentView
	testwait.Within(t, 30*time.Second, "the deployment to warn that its alias is gone", func() bool {
		var err error
		v, err = c.Deployments.Get(t.Context(), "iris-ep", "champ")
		return err == nil && v.ModelAlias != nil && strings.Contains(v.ModelAlias.Warning, "model iris has no alias champion any more: still serving version 2") &&
			strings.Contains(v.Reason, "warning: model iris has no alias champion")
	})
	if v.Generation != 2 || v.ProvisioningState != "Succeeded" {
		t.Errorf("after the alias was deleted: generation %d, %s (%s); want it still serving generation 2", v.Generation, v.ProvisioningState, v.Reason)
	}
	if code, got := s.send(t, "application/json", split); code != http.StatusOK || !jsonEqual(t, got, want2) {
		t.Errorf("with the alias deleted: %d %s; want version 2's answers", code, got)
	}
	if show := w.ok("online-deployment", "show", "-n", "champ", "-e", "iris-ep").stdout; !strings.Contains(show, "Warning:     model iris has no alias champion any more") {
		t.Errorf("online-deployment show with the alias gone:\n%s", show)
	}
}

// aliasLoad is two clients calling an endpoint without pause, counting what answered.
type aliasLoad struct {
	stop                   chan struct{}
	wg                     sync.WaitGroup
	failed, served, fromV2 atomic.Int64
	firstFailure           atomic.Value
	lastV2                 atomic.Bool
}

// startAliasLoad starts the clients, sending body; want1 and want2 are the two versions' answers.
func startAliasLoad(t *testing.T, s *scorer, body, want1, want2 string) *aliasLoad {
	l := &aliasLoad{stop: make(chan struct{})}
	for range 2 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				code, got := s.send(t, "application/json", body)
				switch {
				case code == http.StatusOK && jsonEqual(t, got, want2):
					l.served.Add(1)
					l.fromV2.Add(1)
					l.lastV2.Store(true)
				case code == http.StatusOK && jsonEqual(t, got, want1):
					l.served.Add(1)
					l.lastV2.Store(false)
				default:
					l.failed.Add(1)
					l.firstFailure.CompareAndSwap(nil, fmt.Sprintf("%d %s", code, got))
				}
			}
		}()
	}
	t.Cleanup(l.stopAndWait)
	return l
}

func (l *aliasLoad) stopAndWait() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// checkReplicasOn fails t unless the deployment's replicas all run on compute.
func checkReplicasOn(t *testing.T, w *ws, endpoint, deployment, compute string) {
	t.Helper()
	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", deployment, "-e", endpoint)
	if len(dv.Replicas) == 0 {
		t.Fatalf("%s/%s has no replicas", endpoint, deployment)
	}
	for _, r := range dv.Replicas {
		if d := w.show(r.Run); d.Compute != compute {
			t.Errorf("%s/%s's replica %s runs on %s, want %s", endpoint, deployment, r.Run, d.Compute, compute)
		}
	}
}
