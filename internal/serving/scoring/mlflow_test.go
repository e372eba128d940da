package scoring

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The built-in MLflow scorer, run by the scoring server as a no-code deployment's replica runs
// it: an MLflow model folder written with scikit-learn and pickle (no mlflow package), at
// AZUREML_MODEL_DIR under its folder name.

// mlflowModel writes model/ (MLmodel, model.pkl, requirements.txt) under a fresh folder and
// returns the folder; the model predicts 10*x + n, its signature is x: double, n: long.
// edit changes MLmodel's text.
func mlflowModel(t *testing.T, py string, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	src := `import pickle, sys, os
import numpy as np
from sklearn.linear_model import LinearRegression
out = sys.argv[1]
os.makedirs(out)
X = np.array([[0.0, 0], [1.0, 0], [0.0, 1], [2.0, 3]])
m = LinearRegression().fit(X, X @ np.array([10.0, 1.0]))
pickle.dump(m, open(os.path.join(out, "model.pkl"), "wb"))
`
	if out, err := exec.Command(py, "-c", src, model).CombinedOutput(); err != nil {
		t.Fatalf("write the model: %v\n%s", err, out)
	}
	mlmodel := `flavors:
  python_function:
    loader_module: mlflow.sklearn
    model_path: model.pkl
    predict_fn: predict
  sklearn:
    pickled_model: model.pkl
    serialization_format: pickle
mlflow_version: 2.19.0
signature:
  inputs: '[{"type": "double", "name": "x", "required": true}, {"type": "long", "name": "n", "required": true}]'
`
	if edit != nil {
		mlmodel = edit(mlmodel)
	}
	files := map[string]string{"MLmodel": mlmodel, "requirements.txt": "mlflow==2.19.0\nno-such-package-xyz>=1\n# a comment\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(model, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func startMLflow(t *testing.T, py, modelDir string) *replica {
	t.Helper()
	return start(t, py, t.TempDir(), "", modelDir, mlflowEnv(t)...)
}

// mlflowEnv writes the scorer as the supervisor does and names it.
func mlflowEnv(t *testing.T) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), MLflowFileName)
	if err := os.WriteFile(p, MLflowScorer(), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{MLflowEnv + "=" + p}
}

// MLflow's payloads answer {"predictions": ...} on /invocations and /score alike, Azure's the
// bare predictions; the signature casts and orders the columns.
func TestMLflowScorerPayloads(t *testing.T) {
	py := python(t, "sklearn", "pandas", "yaml")
	r := startMLflow(t, py, mlflowModel(t, py, nil))
	if out := r.out.String(); !strings.Contains(out, "requirements.txt: no-such-package-xyz>=1 is not installed") ||
		!strings.Contains(out, "requirements.txt: mlflow==2.19.0 is not installed") || strings.Contains(out, "a comment") {
		t.Errorf("the replica's log does not name the requirements it lacks:\n%s", out)
	}
	want := []any{12.0, 41.0} // 10*x + n of (1, 2) and (4, 1)
	for _, tc := range []struct {
		name, path, ctype, body string
		want                    any
	}{
		{"dataframe_split", "/invocations", "application/json", `{"dataframe_split": {"columns": ["n", "x"], "data": [[2, 1], [1, 4]]}}`, map[string]any{"predictions": want}},
		{"dataframe_split with index, on /score", "/score", "application/json; charset=utf-8", `{"dataframe_split": {"index": [5, 6], "columns": ["x", "n"], "data": [[1, 2], [4, 1]]}}`, map[string]any{"predictions": want}},
		{"dataframe_records, an extra column", "/invocations", "application/json", `{"dataframe_records": [{"x": 1, "n": 2, "z": 9}, {"x": 4, "n": 1, "z": 9}]}`, map[string]any{"predictions": want}},
		{"instances as records", "/invocations", "application/json", `{"instances": [{"x": 1, "n": 2}, {"x": 4, "n": 1}]}`, map[string]any{"predictions": want}},
		{"instances as rows", "/invocations", "application/json", `{"instances": [[1, 2], [4, 1]]}`, map[string]any{"predictions": want}},
		{"inputs as columns, with params", "/invocations", "application/json", `{"inputs": {"x": [1, 4], "n": [2, 1]}, "params": {"t": 1}}`, map[string]any{"predictions": want}},
		{"CSV", "/invocations", "text/csv", "x,n\n1,2\n4,1\n", map[string]any{"predictions": want}},
		{"input_data split", "/score", "application/json", `{"input_data": {"columns": ["x", "n"], "index": [0, 1], "data": [[1, 2], [4, 1]]}}`, want},
		{"input_data list", "/score", "application/json", `{"input_data": [[1, 2], [4, 1]]}`, want},
		{"input_data named tensors", "/score", "application/json", `{"input_data": {"x": [1, 4], "n": [2, 1]}}`, want},
	} {
		got := do(t, "POST", r.url+tc.path, tc.body, "Content-Type", tc.ctype)
		var v any
		if got.status != 200 || json.Unmarshal([]byte(got.body), &v) != nil || !near(v, tc.want) {
			t.Errorf("%s: %d %s; want 200 %v", tc.name, got.status, got.body, tc.want)
		}
	}
	for path, want := range map[string]string{"/ping": "\n", "/health": "\n", "/version": "2.19.0"} {
		if got := do(t, "GET", r.url+path, ""); got.status != 200 || got.body != want {
			t.Errorf("GET %s: %d %q; want 200 %q", path, got.status, got.body, want)
		}
	}
}

// The client's mistakes are 400s in MLflow's error shape (a signature violation names the
// column), a wrong content type a 415 in text; none stops the server.
func TestMLflowScorerErrors(t *testing.T) {
	py := python(t, "sklearn", "pandas", "yaml")
	r := startMLflow(t, py, mlflowModel(t, py, nil))
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		code, wantIn      string
	}{
		{"missing column", "application/json", `{"dataframe_split": {"columns": ["x"], "data": [[1]]}}`, 400, "INVALID_PARAMETER_VALUE", "missing inputs ['n']"},
		{"not a whole number", "application/json", `{"dataframe_records": [{"x": 1, "n": 1.5}]}`, 400, "INVALID_PARAMETER_VALUE", "column 'n' must hold long"},
		{"text for a double", "application/json", `{"dataframe_records": [{"x": "one", "n": 1}]}`, 400, "INVALID_PARAMETER_VALUE", "column 'x' must hold double"},
		{"wrong width", "application/json", `{"instances": [[1, 2, 3]]}`, 400, "INVALID_PARAMETER_VALUE", "expects 2 columns"},
		{"no payload key", "application/json", `{"rows": [[1, 2]]}`, 400, "BAD_REQUEST", "exactly one of the input fields"},
		{"two payload keys", "application/json", `{"instances": [[1, 2]], "inputs": [[1, 2]]}`, 400, "BAD_REQUEST", "exactly one of the input fields"},
		{"a list", "application/json", `[[1, 2]]`, 400, "BAD_REQUEST", "Received a list"},
		{"not JSON", "application/json", `{`, 400, "BAD_REQUEST", "valid JSON"},
		{"split not a dict", "application/json", `{"dataframe_split": [[1, 2]]}`, 400, "BAD_REQUEST", "must be a dictionary"},
		{"records not a list", "application/json", `{"dataframe_records": {"x": 1}}`, 400, "BAD_REQUEST", "must be a list of records"},
		{"params not a dict", "application/json", `{"instances": [[1, 2]], "params": [1]}`, 400, "BAD_REQUEST", "'params' must be"},
		{"input_data with MLflow keys", "application/json", `{"input_data": [[1, 2]], "instances": [[1, 2]]}`, 400, "BAD_REQUEST", "also got ['instances']"},
		{"bad CSV", "text/csv", "x,n\n1,2,3,4\n\"", 400, "BAD_REQUEST", "Failed to parse input"},
		{"XML", "application/xml", `<x/>`, 415, "", "only supports the following content types"},
		{"MLflow 1's format", "application/json; format=pandas-split", `{}`, 415, "", "Unrecognized content type parameters: format"},
		{"latin-1", "application/json; charset=latin-1", `{}`, 415, "", "only supports UTF-8"},
		{"no content type", "", `{}`, 415, "", "Content-Type is missing"},
	} {
		got := do(t, "POST", r.url+"/invocations", tc.body, "Content-Type", tc.ctype)
		if got.status != tc.status || !strings.Contains(got.body, tc.wantIn) {
			t.Errorf("%s: %d %s; want %d naming %q", tc.name, got.status, got.body, tc.status, tc.wantIn)
			continue
		}
		if tc.code == "" {
			continue
		}
		var e struct {
			ErrorCode string `json:"error_code"`
			Message   string `json:"message"`
		}
		if err := json.Unmarshal([]byte(got.body), &e); err != nil || e.ErrorCode != tc.code {
			t.Errorf("%s: %s; want MLflow's error shape with error_code %s", tc.name, got.body, tc.code)
		}
	}
	if got := do(t, "GET", r.url+"/invocations", ""); got.status != 405 {
		t.Errorf("GET /invocations: %d %s; want 405", got.status, got.body)
	}
	if got := do(t, "POST", r.url+"/invocations", `{"instances": [[1, 2]]}`, "Content-Type", "application/json"); got.status != 200 {
		t.Errorf("after the errors: %d %s", got.status, got.body)
	}
}

// A model the scorer cannot serve stops the replica at its start (status 3), saying why.
func TestMLflowScorerRefusesAtStart(t *testing.T) {
	py := python(t, "sklearn", "pandas", "yaml")
	for _, tc := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"no python_function", func(s string) string {
			return strings.Replace(s, "  python_function:\n    loader_module: mlflow.sklearn\n    model_path: model.pkl\n    predict_fn: predict\n", "", 1)
		}, "has no python_function flavour (flavours: sklearn)"},
		{"another loader", func(s string) string { return strings.Replace(s, "mlflow.sklearn", "mlflow.transformers", 1) },
			"loader_module 'mlflow.transformers' is not one Hangar's built-in scorer has"},
		{"cloudpickle without cloudpickle", func(s string) string {
			return strings.Replace(s, "serialization_format: pickle", "serialization_format: cloudpickle", 1)
		}, "cloudpickle, which the replica's environment lacks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "cloudpickle without cloudpickle" && exec.Command(py, "-c", "import cloudpickle").Run() == nil {
				t.Skip(py + " has cloudpickle")
			}
			r := launch(t, py, t.TempDir(), "", mlflowModel(t, py, tc.edit), mlflowEnv(t)...)
			if code := r.exitCode(t); code != 3 || !strings.Contains(r.errb.String(), tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant 3 and %q", code, r.errb, tc.want)
			}
		})
	}
	r := launch(t, py, t.TempDir(), "", t.TempDir(), mlflowEnv(t)...)
	if code := r.exitCode(t); code != 3 || !strings.Contains(r.errb.String(), "no MLmodel file") {
		t.Errorf("no model: exit %d, stderr:\n%s", code, r.errb)
	}
	r = launch(t, py, t.TempDir(), "", mlflowModel(t, py, nil), append(mlflowEnv(t), "MLFLOW_MODEL_FOLDER=other")...)
	if code := r.exitCode(t); code != 3 || !strings.Contains(r.errb.String(), "MLFLOW_MODEL_FOLDER='other'") {
		t.Errorf("a wrong MLFLOW_MODEL_FOLDER: exit %d, stderr:\n%s", code, r.errb)
	}
}

// MLFLOW_MODEL_FOLDER (Azure's MLflow images' variable, set in environment_variables) picks the
// model's folder under AZUREML_MODEL_DIR.
func TestMLflowScorerModelFolder(t *testing.T) {
	py := python(t, "sklearn", "pandas", "yaml")
	dir := mlflowModel(t, py, nil)
	if err := os.MkdirAll(filepath.Join(dir, "decoy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "decoy", "MLmodel"), []byte("flavors: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, py, t.TempDir(), "", dir, append(mlflowEnv(t), "MLFLOW_MODEL_FOLDER=model")...)
	got := do(t, "POST", r.url+"/score", `{"input_data": [[1, 2]]}`, "Content-Type", "application/json")
	var v any
	if got.status != 200 || json.Unmarshal([]byte(got.body), &v) != nil || !near(v, []any{12.0}) {
		t.Errorf("%d %s; want [12]", got.status, got.body)
	}
}

// near says whether two decoded JSON values are equal, numbers within 1e-9 (a least-squares
// fit's predictions are not exact).
func near(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) < 1e-9
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !near(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !near(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// A PyTorch model (mlflow.pytorch's layout: the whole module saved with torch.save under data/)
// is fed float32 tensors: a DataFrame in gives records out, as mlflow.pytorch's pyfunc does.
func TestMLflowScorerPyTorch(t *testing.T) {
	py := python(t, "torch", "pandas", "yaml")
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	src := `import os, sys, torch
out = sys.argv[1]
os.makedirs(os.path.join(out, "data"))
m = torch.nn.Linear(2, 1)
with torch.no_grad():
    m.weight.copy_(torch.tensor([[10.0, 1.0]]))
    m.bias.zero_()
torch.save(m, os.path.join(out, "data", "model.pth"))
open(os.path.join(out, "MLmodel"), "w").write("""flavors:
  python_function:
    data: data
    loader_module: mlflow.pytorch
    pickle_module_name: mlflow.pytorch.pickle_module
  pytorch:
    model_data: data
    pytorch_version: 1.13.0
mlflow_version: 2.19.0
signature:
  inputs: '[{"type": "double", "name": "x"}, {"type": "double", "name": "n"}]'
""")
`
	if out, err := exec.Command(py, "-c", src, model).CombinedOutput(); err != nil {
		t.Fatalf("write the model: %v\n%s", err, out)
	}
	r := startMLflow(t, py, dir)
	for _, tc := range []struct {
		body string
		want any
	}{
		{`{"dataframe_split": {"columns": ["x", "n"], "data": [[1, 2], [4, 1]]}}`,
			map[string]any{"predictions": []any{map[string]any{"0": 12.0}, map[string]any{"0": 41.0}}}},
		{`{"input_data": {"columns": ["x", "n"], "index": [0, 1], "data": [[1, 2], [4, 1]]}}`,
			[]any{map[string]any{"0": 12.0}, map[string]any{"0": 41.0}}},
	} {
		got := do(t, "POST", r.url+"/score", tc.body, "Content-Type", "application/json")
		var v any
		if got.status != 200 || json.Unmarshal([]byte(got.body), &v) != nil || !near(v, tc.want) {
			t.Errorf("%s: %d %s; want %v", tc.body, got.status, got.body, tc.want)
		}
	}
}
