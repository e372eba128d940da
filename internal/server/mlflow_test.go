package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// mlflowCall sends an MLflow API request (a GET's query or a POST's JSON body) with token and
// returns the status and the decoded answer.
func (ts *testServer) mlflowCall(t testing.TB, token, method, path string, in any) (int, map[string]any) {
	t.Helper()
	u := ts.url + mlflowapi.Prefix + path
	var body io.Reader
	if method == http.MethodGet && in != nil {
		u += "?" + in.(url.Values).Encode()
	} else if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %q", method, path, b)
	}
	return resp.StatusCode, out
}

// ok is mlflowCall as the workspace, failing the test on anything but 200.
func (ts *testServer) ok(t testing.TB, method, path string, in any) map[string]any {
	t.Helper()
	st, out := ts.mlflowCall(t, adminToken, method, path, in)
	if st != http.StatusOK {
		t.Fatalf("%s %s = %d %v", method, path, st, out)
	}
	return out
}

// wantMLflowError checks an MLflow error answer: status, error_code and a part of the message.
func wantMLflowError(t testing.TB, what string, st int, out map[string]any, wantSt int, code, msg string) {
	t.Helper()
	if st != wantSt || out["error_code"] != code || !strings.Contains(fmt.Sprint(out["message"]), msg) {
		t.Errorf("%s = %d %v; want %d %s with %q", what, st, out, wantSt, code, msg)
	}
}

// at reads a path of keys and indexes in a decoded answer ("run.info.status", "runs.0.info").
func at(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			fmt.Sscan(k, &i)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func TestMLflowExperiments(t *testing.T) {
	ts := newTestServer(t)
	get, post := http.MethodGet, http.MethodPost
	if name := at(ts.ok(t, get, "experiments/get", q("experiment_id", "0")), "experiment.name"); name != "Default" {
		t.Errorf("experiment 0 is %v, want Default", name)
	}
	id := at(ts.ok(t, post, "experiments/create", map[string]any{"name": "vision",
		"tags": []map[string]string{{"key": "team", "value": "a"}}}), "experiment_id").(string)
	st, out := ts.mlflowCall(t, adminToken, post, "experiments/create", map[string]any{"name": "vision"})
	wantMLflowError(t, "create twice", st, out, 400, mlflowapi.CodeAlreadyExists, "Experiment 'vision' already exists.")
	st, out = ts.mlflowCall(t, adminToken, post, "experiments/create", map[string]any{})
	wantMLflowError(t, "create without name", st, out, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'name'")

	e := ts.ok(t, get, "experiments/get-by-name", q("experiment_name", "vision"))
	if at(e, "experiment.experiment_id") != id || at(e, "experiment.lifecycle_stage") != "active" ||
		at(e, "experiment.tags.0.key") != "team" || at(e, "experiment.artifact_location") != "mlflow-artifacts:/"+id {
		t.Errorf("get-by-name = %v", e)
	}
	st, out = ts.mlflowCall(t, adminToken, get, "experiments/get-by-name", q("experiment_name", "nope"))
	wantMLflowError(t, "unknown name", st, out, 404, mlflowapi.CodeNotFound, "Could not find experiment with name 'nope'")
	st, out = ts.mlflowCall(t, adminToken, get, "experiments/get", q("experiment_id", "99"))
	wantMLflowError(t, "unknown id", st, out, 404, mlflowapi.CodeNotFound, "No Experiment with id=99 exists")

	ts.ok(t, post, "experiments/create", map[string]any{"name": "nlp"})
	ts.ok(t, post, "experiments/set-experiment-tag", map[string]any{"experiment_id": id, "key": "stage", "value": "prod"})
	names := func(out map[string]any) []string {
		var n []string
		for _, e := range out["experiments"].([]any) {
			n = append(n, e.(map[string]any)["name"].(string))
		}
		return n
	}
	if got := names(ts.ok(t, post, "experiments/search", map[string]any{"filter": "name LIKE 'vis%' AND tags.stage = 'prod'"})); !cmp.Equal(got, []string{"vision"}) {
		t.Errorf("search by name and tag = %v", got)
	}
	page := ts.ok(t, get, "experiments/search", q("max_results", "2", "order_by", "name ASC"))
	if got := names(page); !cmp.Equal(got, []string{"Default", "nlp"}) || page["next_page_token"] == nil {
		t.Fatalf("first page = %v", page)
	}
	page = ts.ok(t, post, "experiments/search", map[string]any{"max_results": 2, "order_by": []string{"name ASC"}, "page_token": page["next_page_token"]})
	if got := names(page); !cmp.Equal(got, []string{"vision"}) || page["next_page_token"] != nil {
		t.Errorf("second page = %v", page)
	}

	ts.ok(t, post, "experiments/update", map[string]any{"experiment_id": id, "new_name": "vision2"})
	ts.ok(t, post, "experiments/delete", map[string]any{"experiment_id": id})
	if got := names(ts.ok(t, post, "experiments/search", nil)); len(got) != 2 {
		t.Errorf("active experiments after the delete = %v", got)
	}
	if got := names(ts.ok(t, post, "experiments/search", map[string]any{"view_type": "DELETED_ONLY"})); !cmp.Equal(got, []string{"vision2"}) {
		t.Errorf("deleted experiments = %v", got)
	}
	st, out = ts.mlflowCall(t, adminToken, post, "runs/create", map[string]any{"experiment_id": id})
	wantMLflowError(t, "run in a deleted experiment", st, out, 400, mlflowapi.CodeInvalidParameter, "must be in the 'active' state")
	ts.ok(t, post, "experiments/restore", map[string]any{"experiment_id": id})
	if got := at(ts.ok(t, get, "experiments/get", q("experiment_id", id)), "experiment.lifecycle_stage"); got != "active" {
		t.Errorf("restored experiment is %v", got)
	}
	st, out = ts.mlflowCall(t, adminToken, post, "experiments/delete", map[string]any{"experiment_id": "0"})
	wantMLflowError(t, "delete Default", st, out, 400, mlflowapi.CodeInvalidParameter, "Cannot delete the default experiment")
	// MLflow 1.x clients list experiments.
	if got := names(ts.ok(t, get, "experiments/list", nil)); len(got) != 3 {
		t.Errorf("experiments/list = %v", got)
	}
}

// A run logged through MLflow from a notebook: what the client reads back, and what job show
// shows of it.
func TestMLflowRunLogging(t *testing.T) {
	ts := newTestServer(t)
	get, post := http.MethodGet, http.MethodPost
	exp := at(ts.ok(t, post, "experiments/create", map[string]any{"name": "e"}), "experiment_id")
	run := ts.ok(t, post, "runs/create", map[string]any{"experiment_id": exp, "run_name": "first try", "start_time": 1700000000000,
		"user_id": "ada", "tags": []map[string]string{{"key": "mlflow.source.type", "value": "NOTEBOOK"}}})
	id := at(run, "run.info.run_id").(string)
	if len(id) != 32 || at(run, "run.info.status") != "RUNNING" || at(run, "run.info.start_time") != 1700000000000.0 ||
		at(run, "run.info.run_name") != "first try" || at(run, "run.info.user_id") != "ada" ||
		at(run, "run.info.artifact_uri") != fmt.Sprintf("mlflow-artifacts:/%s/%s/artifacts", exp, id) {
		t.Errorf("runs/create = %v", run)
	}
	for step := range 3 {
		ts.ok(t, post, "runs/log-metric", map[string]any{"run_id": id, "key": "loss", "value": 1.0 / float64(step+1), "timestamp": 1700000001000 + step, "step": step})
	}
	ts.ok(t, post, "runs/log-parameter", map[string]any{"run_id": id, "key": "lr", "value": "0.01"})
	ts.ok(t, post, "runs/log-parameter", map[string]any{"run_uuid": id, "key": "lr", "value": "0.01"}) // the same value again
	st, out := ts.mlflowCall(t, adminToken, post, "runs/log-parameter", map[string]any{"run_id": id, "key": "lr", "value": "0.1"})
	wantMLflowError(t, "param changed", st, out, 400, mlflowapi.CodeInvalidParameter, "Changing param values is not allowed. Param with key='lr' was already logged with value='0.01'")
	ts.ok(t, post, "runs/set-tag", map[string]any{"run_id": id, "key": "team", "value": "vision"})
	ts.ok(t, post, "runs/set-tag", map[string]any{"run_id": id, "key": "mlflow.note.content", "value": "baseline"})
	ts.ok(t, post, "runs/set-tag", map[string]any{"run_id": id, "key": "gone", "value": "x"})
	ts.ok(t, post, "runs/delete-tag", map[string]any{"run_id": id, "key": "gone"})
	st, out = ts.mlflowCall(t, adminToken, post, "runs/delete-tag", map[string]any{"run_id": id, "key": "gone"})
	wantMLflowError(t, "delete a missing tag", st, out, 404, mlflowapi.CodeNotFound, "No tag with name: gone in run with id "+id)
	ts.ok(t, post, "runs/log-batch", map[string]any{"run_id": id,
		"metrics": []map[string]any{{"key": "acc", "value": 0.5, "timestamp": 1700000002000, "step": 1}, {"key": "acc", "value": 0.9, "timestamp": 1700000003000, "step": 2}},
		"params":  []map[string]string{{"key": "epochs", "value": "3"}},
		"tags":    []map[string]string{{"key": "mlflow.runName", "value": "renamed"}}})
	ts.ok(t, post, "runs/log-inputs", map[string]any{"run_id": id, "datasets": []map[string]any{{
		"tags":    []map[string]string{{"key": "mlflow.data.context", "value": "train"}},
		"dataset": map[string]string{"name": "mnist", "digest": "abc123", "source_type": "http", "source": "https://x/mnist"}}}})
	ts.ok(t, post, "runs/log-model", map[string]any{"run_id": id, "model_json": `{"artifact_path": "model", "flavors": {}}`})
	ts.ok(t, post, "runs/update", map[string]any{"run_id": id, "status": "FINISHED", "end_time": 1700000009000})

	got := ts.ok(t, get, "runs/get", q("run_id", id))["run"].(map[string]any)
	want := map[string]any{
		"info": map[string]any{"run_id": id, "run_uuid": id, "run_name": "renamed", "experiment_id": exp, "user_id": "ada",
			"status": "FINISHED", "start_time": 1700000000000.0, "end_time": 1700000009000.0, "lifecycle_stage": "active",
			"artifact_uri": fmt.Sprintf("mlflow-artifacts:/%s/%s/artifacts", exp, id)},
		"data": map[string]any{
			"metrics": []any{
				map[string]any{"key": "acc", "value": 0.9, "timestamp": 1700000003000.0, "step": 2.0},
				map[string]any{"key": "loss", "value": 1.0 / 3, "timestamp": 1700000001002.0, "step": 2.0}},
			"params": []any{map[string]any{"key": "epochs", "value": "3"}, map[string]any{"key": "lr", "value": "0.01"}},
			"tags": []any{map[string]any{"key": "mlflow.runName", "value": "renamed"}, map[string]any{"key": "mlflow.note.content", "value": "baseline"},
				map[string]any{"key": "mlflow.log-model.history", "value": `[{"artifact_path":"model","flavors":{}}]`},
				map[string]any{"key": "mlflow.source.type", "value": "NOTEBOOK"}, map[string]any{"key": "team", "value": "vision"}}},
		"inputs": map[string]any{"dataset_inputs": []any{map[string]any{
			"tags":    []any{map[string]any{"key": "mlflow.data.context", "value": "train"}},
			"dataset": map[string]any{"name": "mnist", "digest": "abc123", "source_type": "http", "source": "https://x/mnist"}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs/get (-want +got):\n%s", diff)
	}

	hist := ts.ok(t, get, "metrics/get-history", q("run_id", id, "metric_key", "loss", "max_results", "2"))
	if n := len(hist["metrics"].([]any)); n != 2 || hist["next_page_token"] == nil {
		t.Fatalf("history page 1 = %v", hist)
	}
	hist = ts.ok(t, get, "metrics/get-history", q("run_id", id, "metric_key", "loss", "max_results", "2", "page_token", hist["next_page_token"].(string)))
	if diff := cmp.Diff([]any{map[string]any{"key": "loss", "value": 1.0 / 3, "timestamp": 1700000001002.0, "step": 2.0}}, hist["metrics"]); diff != "" || hist["next_page_token"] != nil {
		t.Errorf("history page 2 = %v (-want +got):\n%s", hist, diff)
	}

	// job show shows the same run: name, description, params, tags, metrics, state.
	d, err := ts.admin.Jobs.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.DisplayName != "renamed" || d.Description != "baseline" || d.ExperimentName != "e" || d.Status != job.Completed ||
		d.Params["lr"] != "0.01" || d.Tags["team"] != "vision" || d.Metrics["acc"] != 0.9 {
		t.Errorf("job show = %+v", d)
	}

	ts.ok(t, post, "runs/delete", map[string]any{"run_id": id})
	st, out = ts.mlflowCall(t, adminToken, post, "runs/log-metric", map[string]any{"run_id": id, "key": "loss", "value": 1, "timestamp": 1})
	wantMLflowError(t, "log to a deleted run", st, out, 400, mlflowapi.CodeInvalidParameter, "must be in the 'active' state")
	if runs := ts.ok(t, post, "runs/search", map[string]any{"experiment_ids": []string{exp.(string)}})["runs"]; runs != nil {
		t.Errorf("search finds the deleted run: %v", runs)
	}
	deleted := ts.ok(t, post, "runs/search", map[string]any{"experiment_ids": []string{exp.(string)}, "run_view_type": "DELETED_ONLY"})
	if at(deleted, "runs.0.info.lifecycle_stage") != "deleted" {
		t.Errorf("deleted runs = %v", deleted)
	}
	ts.ok(t, post, "runs/restore", map[string]any{"run_id": id})
	if at(ts.ok(t, get, "runs/get", q("run_id", id)), "run.info.lifecycle_stage") != "active" {
		t.Error("restored run is not active")
	}
}

func TestMLflowErrorsAndLimits(t *testing.T) {
	ts := newTestServer(t)
	post := http.MethodPost
	id := at(ts.ok(t, post, "runs/create", map[string]any{"experiment_id": "0"}), "run.info.run_id").(string)
	many := func(n int, f func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	metric := func(i int) any {
		return map[string]any{"key": fmt.Sprint("m", i), "value": 1, "timestamp": 1, "step": 0}
	}
	kv := func(i int) any { return map[string]any{"key": fmt.Sprint("k", i), "value": "v"} }
	tests := []struct {
		name, path string
		body       map[string]any
		status     int
		code, msg  string
	}{
		{"unknown run", "runs/log-metric", map[string]any{"run_id": "ghost", "key": "a", "value": 1, "timestamp": 1}, 404, mlflowapi.CodeNotFound, "Run with id=ghost not found"},
		{"get unknown run", "runs/update", map[string]any{"run_id": "ghost", "status": "FINISHED"}, 404, mlflowapi.CodeNotFound, "Run with id=ghost not found"},
		{"no run id", "runs/log-parameter", map[string]any{"key": "a", "value": "1"}, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'run_id'"},
		{"1001 metrics", "runs/log-batch", map[string]any{"run_id": id, "metrics": many(1001, metric)}, 400, mlflowapi.CodeInvalidParameter, "at most 1000 metrics. Got 1001 metrics"},
		{"101 params", "runs/log-batch", map[string]any{"run_id": id, "params": many(101, kv)}, 400, mlflowapi.CodeInvalidParameter, "at most 100 params"},
		{"101 tags", "runs/log-batch", map[string]any{"run_id": id, "tags": many(101, kv)}, 400, mlflowapi.CodeInvalidParameter, "at most 100 tags"},
		{"1001 in all", "runs/log-batch", map[string]any{"run_id": id, "metrics": many(1000, metric), "params": many(1, kv)}, 400, mlflowapi.CodeInvalidParameter, "1001 total entities"},
		{"bad metric key", "runs/log-metric", map[string]any{"run_id": id, "key": "a;b", "value": 1, "timestamp": 1}, 400, mlflowapi.CodeInvalidParameter, "Invalid metric name: 'a;b'"},
		{"long param", "runs/log-parameter", map[string]any{"run_id": id, "key": "p", "value": strings.Repeat("x", 6001)}, 400, mlflowapi.CodeInvalidParameter, "exceeded length limit of 6000"},
		{"bad status", "runs/update", map[string]any{"run_id": id, "status": "DONE"}, 400, mlflowapi.CodeInvalidParameter, "Invalid value \"DONE\" for parameter 'status'"},
		{"bad filter", "runs/search", map[string]any{"experiment_ids": []string{"0"}, "filter": "metrics.a > 'x'"}, 400, mlflowapi.CodeInvalidParameter, "Expected numeric value type for metric. Found x"},
		{"bad order", "runs/search", map[string]any{"experiment_ids": []string{"0"}, "order_by": []string{"metrics.a UP"}}, 400, mlflowapi.CodeInvalidParameter, "Invalid ordering key"},
		{"max_results", "runs/search", map[string]any{"experiment_ids": []string{"0"}, "max_results": 50001}, 400, mlflowapi.CodeInvalidParameter, "'max_results'"},
		{"bad token", "runs/search", map[string]any{"experiment_ids": []string{"0"}, "page_token": "!!"}, 400, mlflowapi.CodeInvalidParameter, "Invalid page token"},
		{"bad json type", "runs/log-metric", map[string]any{"run_id": id, "key": "a", "value": map[string]any{}}, 400, mlflowapi.CodeInvalidParameter, "expected a number"},
		{"NaN", "runs/log-metric", map[string]any{"run_id": id, "key": "a", "value": "NaN", "timestamp": 1}, 400, mlflowapi.CodeInvalidParameter, "finite values only"},
		{"two run names", "runs/create", map[string]any{"experiment_id": "0", "run_name": "a", "tags": []any{map[string]any{"key": "mlflow.runName", "value": "b"}}}, 400, mlflowapi.CodeInvalidParameter, "Both 'mlflow.runName' tag and 'run_name' are set, but they are different"},
		{"unknown experiment", "runs/create", map[string]any{"experiment_id": "42"}, 404, mlflowapi.CodeNotFound, "No Experiment with id=42 exists"},
		{"bad model", "runs/log-model", map[string]any{"run_id": id, "model_json": "nope"}, 400, mlflowapi.CodeInvalidParameter, "Malformed model info"},
	}
	for _, tt := range tests {
		st, out := ts.mlflowCall(t, adminToken, post, tt.path, tt.body)
		wantMLflowError(t, tt.name, st, out, tt.status, tt.code, tt.msg)
	}
	// A batch that fails writes nothing: MLflow's limits are checked before any entry is stored.
	if got := ts.ok(t, http.MethodGet, "runs/get", q("run_id", id)); at(got, "run.data.metrics") != nil || at(got, "run.data.params") != nil {
		t.Errorf("refused batches left data: %v", got)
	}
	// The same paths under /ajax-api/ (MLflow's UI) answer the same.
	st, _ := ts.raw(t, adminToken, http.MethodGet, "/ajax-api/2.0/mlflow/runs/get?run_id="+id, "")
	if st != http.StatusOK {
		t.Errorf("ajax-api runs/get = %d", st)
	}
	if st, _ := ts.raw(t, "", http.MethodGet, "/ajax-api/2.0/mlflow/runs/get?run_id="+id, ""); st != http.StatusUnauthorized {
		t.Errorf("ajax-api without a token = %d, want 401", st)
	}
}

// A job's script logs with its run token, to its own run only; runs/update never changes a
// job's state.
func TestMLflowRunTokenScope(t *testing.T) {
	ts := newTestServer(t)
	post := http.MethodPost
	mine, other := ts.createJob(t, "mine").ID, ts.createJob(t, "other").ID
	tok := ts.ctrl.RunToken(mine)
	if st, out := ts.mlflowCall(t, tok, post, "runs/log-metric", map[string]any{"run_id": mine, "key": "loss", "value": 0.5, "timestamp": 1, "step": 1}); st != 200 {
		t.Fatalf("log to its own run = %d %v", st, out)
	}
	if st, out := ts.mlflowCall(t, tok, http.MethodGet, "runs/get", q("run_id", mine)); st != 200 || at(out, "run.info.status") != "SCHEDULED" {
		t.Errorf("get its own run = %d %v", st, out)
	}
	forbidden := []struct {
		method, path string
		in           any
	}{
		{post, "runs/log-metric", map[string]any{"run_id": other, "key": "loss", "value": 1, "timestamp": 1}},
		{http.MethodGet, "runs/get", q("run_id", other)},
		{post, "runs/log-batch", map[string]any{"run_id": other}},
		{post, "runs/set-tag", map[string]any{"run_id": other, "key": "a", "value": "b"}},
		{post, "runs/delete", map[string]any{"run_id": other}},
		{post, "runs/create", map[string]any{"experiment_id": "0"}},
		{post, "runs/search", map[string]any{"experiment_ids": []string{"0"}}},
		{post, "experiments/search", nil},
		{post, "experiments/update", map[string]any{"experiment_id": "0", "new_name": "renamed"}},
		{post, "experiments/delete", map[string]any{"experiment_id": "0"}},
	}
	for _, f := range forbidden {
		st, out := ts.mlflowCall(t, tok, f.method, f.path, f.in)
		wantMLflowError(t, f.path, st, out, 403, mlflowapi.CodePermissionDenied, "")
	}
	// mlflow.set_experiment("x") in a job's script: get-by-name, then create when it is not
	// there. Scripts do this routinely; a run token may create an experiment (not change one).
	st, out := ts.mlflowCall(t, tok, http.MethodGet, "experiments/get-by-name", q("experiment_name", "from-a-script"))
	wantMLflowError(t, "get-by-name", st, out, 404, mlflowapi.CodeNotFound, "")
	if st, out := ts.mlflowCall(t, tok, post, "experiments/create", map[string]any{"name": "from-a-script"}); st != 200 || at(out, "experiment_id") == nil {
		t.Errorf("experiments/create with a run token = %d %v", st, out)
	}
	// MLflow's start_run with MLFLOW_RUN_ID set: runs/update RUNNING; end_run: FINISHED. The
	// job stays in the controller's hands; the answer says its state.
	for _, status := range []string{"RUNNING", "FINISHED", "KILLED"} {
		st, out := ts.mlflowCall(t, tok, post, "runs/update", map[string]any{"run_id": mine, "status": status, "end_time": 1, "run_name": "named by mlflow"})
		if st != 200 || at(out, "run_info.status") != "SCHEDULED" || at(out, "run_info.end_time") != nil || at(out, "run_info.run_name") != "named by mlflow" {
			t.Errorf("runs/update %s of a job = %d %v", status, st, out)
		}
	}
	d, err := ts.admin.Jobs.Get(t.Context(), mine)
	if err != nil || d.Status != job.Queued || d.EndedAt != nil || d.DisplayName != "named by mlflow" {
		t.Errorf("job after runs/update = %+v, %v", d, err)
	}
}

// Runs created through MLflow are not jobs: the controller never hands one to a backend nor
// fails it as lost, however long it has been silent.
func TestMLflowRunsStayAwayFromController(t *testing.T) {
	ts := newTestServer(t)
	ts.ctrl.Settings.StaleAfter, ts.ctrl.Settings.NotRespondingAfter, ts.ctrl.Settings.LostAfter = time.Millisecond, time.Millisecond, time.Millisecond
	old := time.Now().Add(-24 * time.Hour).UnixMilli()
	id := at(ts.ok(t, http.MethodPost, "runs/create", map[string]any{"experiment_id": "0", "start_time": old}), "run.info.run_id").(string)
	// A SCHEDULED run is stored Queued: a job in that state would be submitted (and failed, as
	// it names no compute).
	sched := at(ts.ok(t, http.MethodPost, "runs/create", map[string]any{"experiment_id": "0"}), "run.info.run_id").(string)
	ts.ok(t, http.MethodPost, "runs/update", map[string]any{"run_id": sched, "status": "SCHEDULED"})
	ts.runLoop(t)
	// A job created after the loop started is submitted by a pass that read every active run.
	j := ts.createJob(t, "later").ID
	testwait.For(t, "the job's submission", func() bool { return len(ts.fake.Launches()) > 0 })
	for _, l := range ts.fake.Launches() {
		if l.RunID != j {
			t.Errorf("the backend was handed run %s", l.RunID)
		}
	}
	for id, want := range map[string]job.State{id: job.Running, sched: job.Queued} {
		r, err := ts.store.Runs.Run(t.Context(), id)
		if err != nil || r.Status != want || len(r.Handle) != 0 {
			t.Errorf("MLflow run = %+v, %v; want it %s, untouched", r, err, want)
		}
	}
}

// The metrics file that a supervisor ships and what MLflow clients log are one history.
func TestMLflowOneMetricHistory(t *testing.T) {
	ts := newTestServer(t)
	id := ts.createJob(t, "train").ID
	ts.report(t, id, job.Running, nil)
	t0 := time.UnixMilli(1700000000000).UTC()
	_, err := ts.runClient(id).Runs.ShipMetrics(t.Context(), id, api.MetricBatch{Metrics: []job.Metric{
		{Seq: 1, Name: "loss", Value: 2, Step: 0, Time: t0}, {Seq: 2, Name: "loss", Value: 1.5, Step: 1, Time: t0.Add(time.Second)}}})
	if err != nil {
		t.Fatal(err)
	}
	ts.ok(t, http.MethodPost, "runs/log-batch", map[string]any{"run_id": id, "metrics": []map[string]any{
		{"key": "loss", "value": 1.0, "timestamp": 1700000002000, "step": 2}}})
	hist := ts.ok(t, http.MethodGet, "metrics/get-history", q("run_id", id, "metric_key", "loss"))
	want := []any{
		map[string]any{"key": "loss", "value": 2.0, "timestamp": 1700000000000.0, "step": 0.0},
		map[string]any{"key": "loss", "value": 1.5, "timestamp": 1700000001000.0, "step": 1.0},
		map[string]any{"key": "loss", "value": 1.0, "timestamp": 1700000002000.0, "step": 2.0}}
	if diff := cmp.Diff(want, hist["metrics"]); diff != "" {
		t.Errorf("get-history (-want +got):\n%s", diff)
	}
	ms, err := ts.admin.Jobs.Metrics(t.Context(), id)
	if err != nil || len(ms.Metrics) != 3 || ms.Metrics[2].Value != 1 || ms.Metrics[2].Step != 2 {
		t.Errorf("GET /api/jobs/%s/metrics = %+v, %v", id, ms, err)
	}
	d, err := ts.admin.Jobs.Get(t.Context(), id)
	if err != nil || d.Metrics["loss"] != 1 {
		t.Errorf("job show metrics = %v, %v", d.Metrics, err)
	}
	found := ts.ok(t, http.MethodPost, "runs/search", map[string]any{"experiment_ids": []string{"0"}, "filter": "metrics.loss <= 1"})
	if at(found, "runs.0.info.run_id") != id || at(found, "runs.1") != nil {
		t.Errorf("search by the latest loss = %v", found)
	}
}

// A job's experiment_name is its experiment, created with its first run; its spec's tags are
// its MLflow tags.
func TestMLflowJobExperiment(t *testing.T) {
	ts := newTestServer(t)
	d, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: "j", Command: "true",
		ExperimentName: "sweeps", Meta: asset.Meta{Tags: map[string]string{"team": "a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	e := ts.ok(t, http.MethodGet, "experiments/get-by-name", q("experiment_name", "sweeps"))
	exp := at(e, "experiment.experiment_id")
	run := ts.ok(t, http.MethodGet, "runs/get", q("run_id", d.ID))
	if at(run, "run.info.experiment_id") != exp || at(run, "run.data.tags.1.key") != "team" {
		t.Errorf("job's run = %v", run)
	}
	if d.Tags["team"] != "a" {
		t.Errorf("job show tags = %v", d.Tags)
	}
	_ = store.DefaultExperiment
}

// Canceling a run that is not a job ends it: no process would ever take it out of
// CancelRequested. A job's cancel still waits for its supervisor.
func TestCancelRunThatIsNotAJob(t *testing.T) {
	ts := newTestServer(t)
	id := at(ts.ok(t, http.MethodPost, "runs/create", map[string]any{"experiment_id": "0"}), "run.info.run_id").(string)
	d, err := ts.admin.Jobs.Cancel(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != job.Canceled {
		t.Errorf("canceled notebook run is %s, want Canceled", d.Status)
	}
	if got := at(ts.ok(t, http.MethodGet, "runs/get", url.Values{"run_id": {id}}), "run.info.status"); got != "KILLED" {
		t.Errorf("runs/get status %v, want KILLED", got)
	}
	j := ts.createJob(t, "a-job").ID
	if d, err := ts.admin.Jobs.Cancel(t.Context(), j); err != nil || d.Status != job.CancelRequested {
		t.Errorf("a job's cancel: %v, %v; want CancelRequested", d, err)
	}
}

// MLflow clients configured with MLFLOW_TRACKING_USERNAME/PASSWORD send HTTP Basic credentials:
// the password is the token, with the same scope as a bearer token.
func TestMLflowBasicAuth(t *testing.T) {
	ts := newTestServer(t)
	mine := ts.createJob(t, "mine").ID
	other := ts.createJob(t, "other").ID
	get := func(user, pass, run string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.url+mlflowapi.Prefix+"/runs/get?run_id="+run, nil)
		req.SetBasicAuth(user, pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		name, pass, run string
		want            int
	}{
		{"workspace token", adminToken, other, http.StatusOK},
		{"run token, own run", ts.ctrl.RunToken(mine), mine, http.StatusOK},
		{"run token, another run", ts.ctrl.RunToken(mine), other, http.StatusForbidden},
		{"wrong password", "nope", mine, http.StatusUnauthorized},
	} {
		if got := get("anyone", c.pass, c.run); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
