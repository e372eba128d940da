package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
)

// makeMLflowModel writes an MLflow model folder as mlflow.sklearn.log_model lays it out (MLmodel
// with a signature, model.pkl, conda.yaml, requirements.txt), with scikit-learn and pickle
// (there is no mlflow package here), and the predictions scikit-learn itself makes of rows.
const makeMLflowModel = `import json, os, pickle, sys
import numpy as np, pandas as pd, sklearn
from sklearn.linear_model import LogisticRegression

out = sys.argv[1]
os.makedirs(out)
rng = np.random.default_rng(0)
X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["age", "bmi", "bp"])
y = (X["age"] + 2 * X["bmi"] - X["bp"] > 0).astype(int) + (X["bp"] > 1).astype(int)
model = LogisticRegression(max_iter=500).fit(X, y)
with open(os.path.join(out, "model.pkl"), "wb") as f:
    pickle.dump(model, f)
inputs = json.dumps([{"type": "double", "name": c, "required": True} for c in X.columns])
outputs = json.dumps([{"type": "tensor", "tensor-spec": {"dtype": "int64", "shape": [-1]}}])
with open(os.path.join(out, "MLmodel"), "w") as f:
    f.write(f"""artifact_path: model
flavors:
  python_function:
    env:
      conda: conda.yaml
      virtualenv: python_env.yaml
    loader_module: mlflow.sklearn
    model_path: model.pkl
    predict_fn: predict
    python_version: 3.11.2
  sklearn:
    code: null
    pickled_model: model.pkl
    serialization_format: pickle
    sklearn_version: {sklearn.__version__}
mlflow_version: 2.19.0
model_size_bytes: 1000
model_uuid: 0d4c2b8e5a9f4f0b9c1d2e3f4a5b6c7d
signature:
  inputs: '{inputs}'
  outputs: '{outputs}'
utc_time_created: '2026-12-07 12:00:00.000000'
""")
with open(os.path.join(out, "conda.yaml"), "w") as f:
    f.write(f"channels:\n- conda-forge\ndependencies:\n- python=3.11.2\n- pip<=24.0\n- pip:\n  - mlflow==2.19.0\n"
            f"  - scikit-learn=={sklearn.__version__}\nname: mlflow-env\n")
with open(os.path.join(out, "requirements.txt"), "w") as f:
    f.write(f"mlflow==2.19.0\nscikit-learn=={sklearn.__version__}\n")
rows = [[0.5, -1.0, 0.25], [-2.0, 0.3, 1.5], [1.0, 1.0, -1.0]]
print(json.dumps({"rows": rows, "columns": list(X.columns),
                  "predictions": model.predict(pd.DataFrame(rows, columns=X.columns)).tolist()}))
`

// A no-code MLflow deployment, as Azure's ncd examples deploy one: an mlflow_model registered
// with `model create --type mlflow_model`, a deployment with no code_configuration and no
// environment on local, invoked with MLflow's payloads and Azure's: the answers are what
// scikit-learn itself predicts, and a request missing a column of the signature is a 400 that
// names it.
func TestOnlineEndpointMLflowNoCode(t *testing.T) {
	requireTool(t, "python3")
	requireSklearn(t)
	// The node's python3 is Debian's, with its scikit-learn (this machine's PATH may put another first).
	bin := t.TempDir()
	if err := os.Symlink("/usr/bin/python3", filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	w := newWSEnv(t, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")})
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	out, err := exec.Command("/usr/bin/python3", "-c", makeMLflowModel, model).Output()
	if err != nil {
		t.Fatalf("make the MLflow model: %v", err)
	}
	var want struct {
		Rows        [][]float64 `json:"rows"`
		Columns     []string    `json:"columns"`
		Predictions []int       `json:"predictions"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	writeFiles(t, dir, map[string]string{
		"endpoint.yml": "name: ncd-endpoint\nauth_mode: key\n",
		"ncd.yml": "$schema: https://azuremlschemas.azureedge.net/latest/managedOnlineDeployment.schema.json\n" +
			"name: sklearn-deployment\nendpoint_name: ncd-endpoint\nmodel: azureml:diabetes:1\n" +
			"instance_type: Standard_DS3_v2\ninstance_count: 1\n",
	})
	w.ok("model", "create", "--name", "diabetes", "--type", "mlflow_model", "--path", model)
	w.ok("online-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"))
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "ncd.yml"), "--all-traffic")
	s := w.scorer("ncd-endpoint")

	records := make([]map[string]float64, len(want.Rows))
	for i, r := range want.Rows {
		records[i] = map[string]float64{}
		for j, c := range want.Columns {
			records[i][c] = r[j]
		}
	}
	split := map[string]any{"columns": want.Columns, "data": want.Rows}
	wrapped := map[string]any{"predictions": want.Predictions}
	for _, tc := range []struct {
		name string
		body any
		want any
	}{
		{"dataframe_split", map[string]any{"dataframe_split": split}, wrapped},
		{"dataframe_records", map[string]any{"dataframe_records": records}, wrapped},
		{"instances", map[string]any{"instances": records}, wrapped},
		{"inputs", map[string]any{"inputs": map[string]any{"age": col(want.Rows, 0), "bmi": col(want.Rows, 1), "bp": col(want.Rows, 2)}}, wrapped},
		{"dataframe_split with params", map[string]any{"dataframe_split": split, "params": map[string]any{"k": 1}}, wrapped},
		{"Azure input_data", map[string]any{"input_data": map[string]any{"columns": want.Columns, "index": []int{0, 1, 2}, "data": want.Rows}}, want.Predictions},
		{"Azure input_data as a list", map[string]any{"input_data": want.Rows}, want.Predictions},
	} {
		b, _ := json.Marshal(tc.body)
		code, got := s.send(t, "application/json", string(b))
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.name, code, got)
		}
		if wb, _ := json.Marshal(tc.want); !jsonEqual(t, got, string(wb)) {
			t.Errorf("%s: answered %s; want %s (scikit-learn's own predictions)", tc.name, got, wb)
		}
	}
	// MLflow's own routes under the endpoint's URI.
	inv := *s
	inv.uri = strings.TrimSuffix(s.uri, "/score") + "/invocations"
	if code, got := inv.send(t, "application/json", mustJSON(map[string]any{"dataframe_split": split})); code != 200 || !jsonEqual(t, got, mustJSON(wrapped)) {
		t.Errorf("POST /invocations: %d %s", code, got)
	}
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(s.uri, "/score")+"/ping", nil)
	req.Header.Set("Authorization", "Bearer "+s.key)
	if resp, err := s.client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("GET /ping: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	csv := "age,bmi,bp\n" + strings.Join(csvRows(want.Rows), "\n") + "\n"
	if code, got := s.send(t, "text/csv", csv); code != 200 || !jsonEqual(t, got, mustJSON(wrapped)) {
		t.Errorf("CSV: %d %s", code, got)
	}

	// The client's mistakes: 400 in MLflow's error shape (a missing column named), 415 in text.
	for _, tc := range []struct{ name, ctype, body, wantIn string }{
		{"missing column", "application/json", `{"dataframe_split": {"columns": ["age", "bmi"], "data": [[1, 2]]}}`, "['bp']"},
		{"text in a double column", "application/json", `{"dataframe_records": [{"age": "old", "bmi": 1, "bp": 2}]}`, "'age'"},
		{"two payload keys", "application/json", `{"dataframe_split": {"data": [[1,2,3]]}, "instances": [[1,2,3]]}`, "exactly one"},
		{"not JSON", "application/json", `{"dataframe_split":`, "valid JSON"},
	} {
		code, got := s.send(t, tc.ctype, tc.body)
		var e struct {
			ErrorCode string `json:"error_code"`
			Message   string `json:"message"`
		}
		if err := json.Unmarshal([]byte(got), &e); code != http.StatusBadRequest || err != nil || e.ErrorCode == "" || !strings.Contains(e.Message, tc.wantIn) {
			t.Errorf("%s: %d %s; want 400 {error_code, message} naming %s", tc.name, code, got, tc.wantIn)
		}
	}
	if code, got := s.send(t, "application/xml", "<x/>"); code != http.StatusUnsupportedMediaType {
		t.Errorf("XML: %d %s; want 415", code, got)
	}

	// The model's requirements.txt is its environment: the node's python3 has scikit-learn, so
	// the replica runs there; the scorer stands in for mlflow, which is not installed.
	logs := w.ok("online-deployment", "get-logs", "-n", "sklearn-deployment", "-e", "ncd-endpoint").stdout
	for _, s := range []string{"the model's requirements.txt is its environment", "has every library they name: scikit-learn",
		"requirements.txt: mlflow==2.19.0 is not installed in the run's environment (Hangar's built-in scorer stands in for mlflow)"} {
		if !strings.Contains(logs, s) {
			t.Errorf("the replica's log does not say %q:\n%s", s, logs)
		}
	}
}

// send posts body with its content type to the scoring URI; the status and the body.
func (s *scorer) send(t *testing.T, ctype, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.uri, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", ctype)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func col(rows [][]float64, j int) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = r[j]
	}
	return out
}

func csvRows(rows [][]float64) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		b, _ := json.Marshal(r)
		out[i] = strings.Trim(string(b), "[]")
	}
	return out
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// The same no-code deployment on a managed cluster: its replica is placed on a node the cluster
// starts (a local agent), whose supervisor writes the built-in MLflow scorer beside the scoring
// server as on local; the endpoint answers MLflow's and Azure's payloads through it.
func TestOnlineEndpointMLflowNoCodeOnCluster(t *testing.T) {
	requireTool(t, "python3")
	requireSklearn(t)
	w := newWSEnv(t, []string{"PATH=" + debianPython(t) + string(os.PathListSeparator) + os.Getenv("PATH")})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"cluster.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\nidle_time_before_scale_down: 60\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	mlflowNoCodeOn(t, w, dir, "pool")
}

// debianPython is a folder whose python3 is Debian's, with its scikit-learn (this machine's PATH
// may put another first).
func debianPython(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink("/usr/bin/python3", filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	return bin
}

// mlflowNoCodeOn deploys an inline MLflow model (no type: its MLmodel file says it) with no
// code_configuration on compute, checks that its replica runs there, and invokes it with
// MLflow's and Azure's payloads and a request missing a column.
func mlflowNoCodeOn(t *testing.T, w *ws, dir, compute string) {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", "-c", makeMLflowModel, filepath.Join(dir, "model")).Output()
	if err != nil {
		t.Fatalf("make the MLflow model: %v", err)
	}
	var want struct {
		Rows        [][]float64 `json:"rows"`
		Columns     []string    `json:"columns"`
		Predictions []int       `json:"predictions"`
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	writeFiles(t, dir, map[string]string{
		"endpoint.yml": "name: ncd-" + compute + "\nauth_mode: key\n",
		"ncd.yml": "name: sklearn-deployment\nendpoint_name: ncd-" + compute + "\nmodel:\n  path: model\n" +
			"instance_count: 1\ncompute: azureml:" + compute + "\n",
	})
	w.ok("online-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"))
	if r := w.run("online-deployment", "create", "-f", filepath.Join(dir, "ncd.yml"), "--all-traffic", "--timeout", "3m"); r.code != 0 {
		logs := w.run("online-deployment", "get-logs", "-n", "sklearn-deployment", "-e", "ncd-"+compute)
		t.Fatalf("create on %s: exit %d\n%s\nthe replica's log:\n%s%s", compute, r.code, r.stderr, logs.stdout, logs.stderr)
	}
	var dv api.DeploymentView
	w.jsonOut(&dv, "online-deployment", "show", "-n", "sklearn-deployment", "-e", "ncd-"+compute)
	if len(dv.Replicas) != 1 {
		t.Fatalf("replicas %+v; want one", dv.Replicas)
	}
	if d := w.show(dv.Replicas[0].Run); d.Compute != compute {
		t.Errorf("the replica's run is on %s, want %s", d.Compute, compute)
	}
	s := w.scorer("ncd-" + compute)
	split := map[string]any{"columns": want.Columns, "data": want.Rows}
	for _, tc := range []struct {
		name string
		body any
		want any
	}{
		{"dataframe_split", map[string]any{"dataframe_split": split}, map[string]any{"predictions": want.Predictions}},
		{"Azure input_data", map[string]any{"input_data": map[string]any{"columns": want.Columns, "index": []int{0, 1, 2}, "data": want.Rows}}, want.Predictions},
	} {
		code, got := s.send(t, "application/json", mustJSON(tc.body))
		if code != http.StatusOK || !jsonEqual(t, got, mustJSON(tc.want)) {
			t.Errorf("%s: %d %s; want 200 %s (scikit-learn's own predictions)", tc.name, code, got, mustJSON(tc.want))
		}
	}
	if code, got := s.send(t, "application/json", `{"dataframe_split": {"columns": ["age", "bmi"], "data": [[1, 2]]}}`); code != http.StatusBadRequest || !strings.Contains(got, "['bp']") {
		t.Errorf("a missing column: %d %s; want a 400 naming bp", code, got)
	}
}

// On an attached VM (sshd in a network namespace of its own, on this machine's filesystem, its
// sessions' PATH finding Debian's python3), the VM's supervisor serves the same no-code deployment.
func TestOnlineEndpointMLflowNoCodeOnSSHTarget(t *testing.T) {
	requireTool(t, "python3")
	requireSklearn(t)
	bin := debianPython(t)
	srv := sshtest.Start(t, sshtest.Options{NetNS: true, SetEnv: []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin"}})
	w := newWSEnv(t, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")})
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	writeFiles(t, dir, map[string]string{"vm.yml": vmYAML("vm1", srv, srv.KeyFile, work)})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	mlflowNoCodeOn(t, w, dir, "vm1")
}

// On the Slurm test cluster, the supervisor of the Slurm job serves the same no-code deployment.
func TestOnlineEndpointMLflowNoCodeOnSlurm(t *testing.T) {
	requireTool(t, "python3")
	requireSklearn(t)
	conf := slurmConf(t)
	w := newWSEnv(t, []string{"PATH=" + debianPython(t) + string(os.PathListSeparator) + os.Getenv("PATH")})
	t.Cleanup(func() { cancelSlurmJobs(conf, w.home) })
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"hpc.yml": slurmYAML("hpc", conf, "partition: debug\n")})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "hpc.yml"))
	mlflowNoCodeOn(t, w, dir, "hpc")
}
