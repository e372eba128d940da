package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
)

// createModel creates a logged model with token and returns its id.
func (ts *testServer) createModel(t testing.TB, token string, in map[string]any) string {
	t.Helper()
	st, out := ts.mlflowCall(t, token, http.MethodPost, "logged-models", in)
	id, _ := at(out, "model.info.model_id").(string)
	if st != http.StatusOK || !strings.HasPrefix(id, "m-") || len(id) != 34 {
		t.Fatalf("create logged model = %d %v", st, out)
	}
	return id
}

// A logged model's files go up and come back byte for byte through the proxy (PUT, GET,
// listing, DELETE) and through MLflow UI's logged-models/<id>/artifacts routes, also under
// /ajax-api/; they are the model's, not its run's.
func TestMLflowLoggedModelArtifactsRoundTrip(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	tok := ts.ctrl.RunToken("r")
	id := ts.createModel(t, tok, map[string]any{"experiment_id": "0", "name": "model", "source_run_id": "r"})
	root := "/api/2.0/mlflow-artifacts/artifacts/0/models/" + id + "/artifacts/"
	files := map[string]string{"MLmodel": "flavors:\n  python_function: {}\n", "model.pkl": "\x80\x04pickle\x00bytes", "env/conda.yaml": "name: mlflow-env\n"}
	for p, body := range files {
		if r := ts.mlflowDo(t, tok, http.MethodPut, root+p, strings.NewReader(body)); r.status != http.StatusOK {
			t.Fatalf("PUT %s = %d %s", p, r.status, r.body)
		}
	}
	for p, body := range files {
		if r := ts.mlflowDo(t, tok, http.MethodGet, root+p, nil); r.status != http.StatusOK || string(r.body) != body {
			t.Errorf("GET %s = %d %q, want %q", p, r.status, r.body, body)
		}
	}
	want := `{"files":[{"path":"MLmodel","is_dir":false,"file_size":31},{"path":"env","is_dir":true},{"path":"model.pkl","is_dir":false,"file_size":14}]}`
	if r := ts.mlflowDo(t, tok, http.MethodGet, listPath("0/models/"+id+"/artifacts"), nil); strings.TrimSpace(string(r.body)) != want {
		t.Errorf("list = %d %s\nwant %s", r.status, r.body, want)
	}
	ui := "/api/2.0/mlflow/logged-models/" + id + "/artifacts/"
	r := ts.mlflowDo(t, tok, http.MethodGet, ui+"directories?artifact_directory_path=env", nil)
	wantUI := `{"root_uri":"mlflow-artifacts:/0/models/` + id + `/artifacts","files":[{"path":"env/conda.yaml","is_dir":false,"file_size":17}]}`
	if strings.TrimSpace(string(r.body)) != wantUI {
		t.Errorf("UI listing = %d %s\nwant %s", r.status, r.body, wantUI)
	}
	for _, prefix := range []string{"/api/2.0/mlflow/", "/ajax-api/2.0/mlflow/"} {
		r := ts.mlflowDo(t, tok, http.MethodGet, prefix+"logged-models/"+id+"/artifacts/files?artifact_file_path=model.pkl", nil)
		if r.status != http.StatusOK || string(r.body) != files["model.pkl"] {
			t.Errorf("UI download under %s = %d %q", prefix, r.status, r.body)
		}
	}
	if r := ts.mlflowDo(t, tok, http.MethodGet, ui+"files", nil); r.status != http.StatusBadRequest || r.errCode(t) != "BAD_REQUEST" {
		t.Errorf("UI download without a path = %d %s", r.status, r.body)
	}
	if r := ts.mlflowDo(t, tok, http.MethodGet, listPath("0/r/artifacts"), nil); strings.TrimSpace(string(r.body)) != "{}" {
		t.Errorf("the run's own artifacts = %s, want none: the files are the model's", r.body)
	}
	if r := ts.mlflowDo(t, tok, http.MethodDelete, root+"env", nil); r.status != http.StatusOK {
		t.Fatalf("DELETE env = %d %s", r.status, r.body)
	}
	if r := ts.mlflowDo(t, tok, http.MethodGet, root+"env/conda.yaml", nil); r.status != http.StatusNotFound {
		t.Errorf("GET after DELETE = %d %s", r.status, r.body)
	}
	for p, want := range map[string]int{"0/models/" + id + "/artifacts/a/%2e%2e/x": 400, "0/models/m-nope/artifacts/x": 404,
		"0/models/" + id + "/artifacts": 400} {
		r := ts.mlflowDo(t, tok, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/"+p, strings.NewReader("x"))
		if r.status != want {
			t.Errorf("PUT %s = %d %s, want %d", p, r.status, r.body, want)
		}
	}
}

// A run's token reaches its own run's models only: another run's model is 403 on every
// route, a search finds only its own, and it cannot create a model of another run. Readers
// read; a model without a run is a user's.
func TestMLflowLoggedModelAccess(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "mine")
	ts.createJob(t, "other")
	tok, otherTok := ts.ctrl.RunToken("mine"), ts.ctrl.RunToken("other")
	own := ts.createModel(t, tok, map[string]any{"experiment_id": "0"}) // no source_run_id: the token's run
	theirs := ts.createModel(t, otherTok, map[string]any{"experiment_id": "0", "name": "theirs"})
	if got := at(ts.ok(t, http.MethodGet, "logged-models/"+own, nil), "model.info.source_run_id"); got != "mine" {
		t.Errorf("source_run_id of a model a run token created without one = %v, want its run", got)
	}
	forbidden := []struct{ method, path string }{
		{http.MethodGet, "logged-models/" + theirs},
		{http.MethodPatch, "logged-models/" + theirs},
		{http.MethodDelete, "logged-models/" + theirs},
		{http.MethodPatch, "logged-models/" + theirs + "/tags"},
		{http.MethodDelete, "logged-models/" + theirs + "/tags/k"},
		{http.MethodPost, "logged-models/" + theirs + "/params"},
	}
	for _, f := range forbidden {
		var in any = map[string]any{"status": "LOGGED_MODEL_READY"}
		if f.method == http.MethodGet {
			in = nil
		}
		st, out := ts.mlflowCall(t, tok, f.method, f.path, in)
		wantMLflowError(t, f.method+" "+f.path, st, out, 403, mlflowapi.CodePermissionDenied, "")
	}
	st, out := ts.mlflowCall(t, tok, http.MethodPost, "logged-models", map[string]any{"experiment_id": "0", "source_run_id": "other"})
	wantMLflowError(t, "create for another run", st, out, 403, mlflowapi.CodePermissionDenied, "")
	st, out = ts.mlflowCall(t, tok, http.MethodPost, "runs/outputs", map[string]any{"run_id": "mine", "models": []any{map[string]any{"model_id": theirs, "step": 0}}})
	wantMLflowError(t, "another run's model as an output", st, out, 403, mlflowapi.CodePermissionDenied, "")
	st, out = ts.mlflowCall(t, tok, http.MethodPost, "runs/log-metric", map[string]any{"run_id": "mine", "key": "acc", "value": 1, "model_id": theirs})
	wantMLflowError(t, "a metric linked to another run's model", st, out, 403, mlflowapi.CodePermissionDenied, "")
	r := ts.mlflowDo(t, tok, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/0/models/"+theirs+"/artifacts/x", strings.NewReader("x"))
	if r.status != http.StatusForbidden {
		t.Errorf("upload to another run's model = %d %s", r.status, r.body)
	}
	st, out = ts.mlflowCall(t, tok, http.MethodPost, "logged-models/search", map[string]any{"experiment_ids": []string{"0"}})
	if st != 200 || len(at(out, "models").([]any)) != 1 || at(out, "models.0.info.model_id") != own {
		t.Errorf("a run token's search = %d %v, want its own model only", st, out)
	}
	// A model input may name any model (it says nothing of the model's contents).
	if st, out := ts.mlflowCall(t, tok, http.MethodPost, "runs/log-inputs", map[string]any{"run_id": "mine", "models": []any{map[string]any{"model_id": theirs}}}); st != 200 {
		t.Errorf("another run's model as an input = %d %v", st, out)
	}
	if got := at(ts.ok(t, http.MethodGet, "runs/get", q("run_id", "mine")), "run.inputs.model_inputs.0.model_id"); got != theirs {
		t.Errorf("model_inputs = %v", got)
	}
	reader := newUserToken(t, ts, "rita", "reader")
	if st, out := ts.mlflowCall(t, reader, http.MethodGet, "logged-models/"+theirs, nil); st != 200 {
		t.Errorf("a reader's get = %d %v", st, out)
	}
	st, out = ts.mlflowCall(t, reader, http.MethodPatch, "logged-models/"+theirs, map[string]any{"status": "LOGGED_MODEL_READY"})
	if st != http.StatusForbidden {
		t.Errorf("a reader's finalize = %d %v", st, out)
	}
}

// search_logged_models: MLflow's filter grammar over attributes, metrics (the latest point,
// within the datasets asked), params and tags; order_by with metrics last when missing; pages.
func TestMLflowLoggedModelSearch(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ids := map[string]string{}
	for i, name := range []string{"a", "b", "c", "d"} {
		ids[name] = ts.createModel(t, adminToken, map[string]any{"experiment_id": "0", "name": name, "source_run_id": "r",
			"model_type": map[bool]string{true: "clf", false: "reg"}[i%2 == 0],
			"params":     []any{map[string]any{"key": "lr", "value": fmt.Sprint(i)}}, "tags": []any{map[string]any{"key": "team", "value": "t" + name}}})
	}
	for name, acc := range map[string]float64{"a": 0.5, "b": 0.9, "c": 0.7} {
		ts.ok(t, http.MethodPost, "runs/log-batch", map[string]any{"run_id": "r", "metrics": []any{
			map[string]any{"key": "acc", "value": acc, "timestamp": 1, "step": 1, "model_id": ids[name], "dataset_name": "test"},
			map[string]any{"key": "acc", "value": 1 - acc, "timestamp": 1, "step": 1, "model_id": ids[name], "dataset_name": "train"},
		}})
	}
	ts.ok(t, http.MethodPatch, "logged-models/"+ids["b"], map[string]any{"status": "LOGGED_MODEL_READY"})
	names := func(out map[string]any) string {
		var ns []string
		for _, m := range at(out, "models").([]any) {
			ns = append(ns, at(m, "info.name").(string))
		}
		return strings.Join(ns, ",")
	}
	asc := func(field string, up bool) map[string]any {
		return map[string]any{"field_name": field, "ascending": up}
	}
	for _, c := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{}, "d,c,b,a"}, // newest first
		{map[string]any{"filter": "name = 'b'"}, "b"},
		{map[string]any{"filter": "name LIKE '%'", "order_by": []any{asc("name", true)}}, "a,b,c,d"},
		{map[string]any{"filter": "model_type = 'clf' AND params.lr = '2'"}, "c"},
		{map[string]any{"filter": "tags.team ILIKE 'T_' AND name IN ('a', 'd')", "order_by": []any{asc("name", true)}}, "a,d"},
		{map[string]any{"filter": "model_id NOT IN ('" + ids["a"] + "')", "order_by": []any{asc("name", true)}}, "b,c,d"},
		{map[string]any{"filter": "status = 'LOGGED_MODEL_READY'"}, "b"},
		{map[string]any{"filter": "status = 'PENDING'", "order_by": []any{asc("name", false)}}, "d,c,a"},
		{map[string]any{"filter": "metrics.acc > 0.6", "datasets": []any{map[string]any{"dataset_name": "test"}}, "order_by": []any{asc("name", true)}}, "b,c"},
		{map[string]any{"filter": "metrics.acc > 0.4", "datasets": []any{map[string]any{"dataset_name": "train"}}}, "a"},
		{map[string]any{"order_by": []any{map[string]any{"field_name": "metrics.acc", "ascending": false, "dataset_name": "test"}}}, "b,c,a,d"},
		{map[string]any{"order_by": []any{map[string]any{"field_name": "metrics.acc", "ascending": true, "dataset_name": "test"}}}, "a,c,b,d"},
		{map[string]any{"filter": "creation_timestamp > 0 AND source_run_id = 'r'", "max_results": 2}, "d,c"},
	} {
		c.in["experiment_ids"] = []string{"0"}
		if got := names(ts.ok(t, http.MethodPost, "logged-models/search", c.in)); got != c.want {
			t.Errorf("search %v = %s, want %s", c.in, got, c.want)
		}
	}
	// Pages: 2 + 2, the second page's token from the first.
	first := ts.ok(t, http.MethodPost, "logged-models/search", map[string]any{"experiment_ids": []string{"0"}, "max_results": 2})
	tok, _ := at(first, "next_page_token").(string)
	second := ts.ok(t, http.MethodPost, "logged-models/search", map[string]any{"experiment_ids": []string{"0"}, "max_results": 2, "page_token": tok})
	if names(first) != "d,c" || names(second) != "b,a" || at(second, "next_page_token") != nil {
		t.Errorf("pages = %s | %s (next %v)", names(first), names(second), at(second, "next_page_token"))
	}
	for _, c := range []struct {
		in  map[string]any
		msg string
	}{
		{map[string]any{}, "Missing value for required parameter 'experiment_ids'"},
		{map[string]any{"experiment_ids": []string{"0"}, "filter": "foo = 'x'"}, "Invalid attribute key 'foo'"},
		{map[string]any{"experiment_ids": []string{"0"}, "filter": "metrics.acc > 'x'"}, "Expected numeric value type for metric"},
		{map[string]any{"experiment_ids": []string{"0"}, "datasets": []any{map[string]any{"dataset_digest": "d"}}}, "`dataset_name` in the `datasets` clause must be specified."},
		{map[string]any{"experiment_ids": []string{"0"}, "order_by": []any{asc("params.lr", true)}}, "Invalid order_by field"},
	} {
		st, out := ts.mlflowCall(t, adminToken, http.MethodPost, "logged-models/search", c.in)
		wantMLflowError(t, fmt.Sprint(c.in), st, out, 400, mlflowapi.CodeInvalidParameter, c.msg)
	}
	if st, out := ts.mlflowCall(t, adminToken, http.MethodGet, "logged-models/m-0123?x="+url.QueryEscape("y"), nil); st != 404 {
		t.Errorf("an unknown model = %d %v", st, out)
	}
}

// model-versions/create with source models:/m-<id> registers the logged model's files as a
// Hangar version (no bytes copied), in a folder named as the model; a run's token registers
// its own run's models only; a model without files yet is refused.
func TestMLflowRegisterFromLoggedModel(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "mine")
	ts.createJob(t, "other")
	tok := ts.ctrl.RunToken("mine")
	id := ts.createModel(t, tok, map[string]any{"experiment_id": "0", "name": "clf"})
	for p, body := range map[string]string{"MLmodel": "flavors: {}\n", "data/model.pkl": "weights"} {
		if r := ts.mlflowDo(t, tok, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/0/models/"+id+"/artifacts/"+p, strings.NewReader(body)); r.status != 200 {
			t.Fatalf("PUT %s = %d %s", p, r.status, r.body)
		}
	}
	if st, out := ts.mlflowCall(t, tok, http.MethodPost, "registered-models/create", map[string]any{"name": "iris"}); st != 200 {
		t.Fatalf("create registered model = %d %v", st, out)
	}
	st, out := ts.mlflowCall(t, tok, http.MethodPost, "model-versions/create", map[string]any{"name": "iris", "source": "models:/" + id, "model_id": id})
	if st != 200 || at(out, "model_version.version") != "1" || at(out, "model_version.source") != "models:/"+id || at(out, "model_version.status") != "READY" {
		t.Fatalf("create version from a logged model = %d %v", st, out)
	}
	v, err := ts.admin.Models.Get(t.Context(), "iris", "1")
	if err != nil || v.Folder != "clf" || v.Files != 2 || v.Size != int64(len("flavors: {}\n")+len("weights")) || v.Type != "mlflow_model" {
		t.Errorf("the Hangar version = %+v, %v; want the model's 2 files in folder clf", v, err)
	}
	// models:/iris/1 resolves to the version's files, the logged model's.
	out = ts.ok(t, http.MethodGet, "model-versions/get-download-uri", q("name", "iris", "version", "1"))
	uri, _ := at(out, "artifact_uri").(string)
	p, ok := strings.CutPrefix(uri, "mlflow-artifacts:/")
	if r := ts.mlflowDo(t, tok, http.MethodGet, "/api/2.0/mlflow-artifacts/artifacts/"+p+"/data/model.pkl", nil); !ok || r.status != 200 || string(r.body) != "weights" {
		t.Errorf("download through %s = %d %q", uri, r.status, r.body)
	}
	theirs := ts.createModel(t, ts.ctrl.RunToken("other"), map[string]any{"experiment_id": "0"})
	st, out = ts.mlflowCall(t, tok, http.MethodPost, "model-versions/create", map[string]any{"name": "iris", "source": "models:/" + theirs})
	wantMLflowError(t, "another run's model", st, out, 403, mlflowapi.CodePermissionDenied, "")
	st, out = ts.mlflowCall(t, adminToken, http.MethodPost, "model-versions/create", map[string]any{"name": "iris", "source": "models:/" + theirs})
	wantMLflowError(t, "a model without files", st, out, 400, mlflowapi.CodeInvalidParameter, "has no files yet")
	st, out = ts.mlflowCall(t, adminToken, http.MethodPost, "model-versions/create", map[string]any{"name": "iris", "source": "models:/" + id, "run_id": "other"})
	wantMLflowError(t, "a run_id that is not the model's", st, out, 400, mlflowapi.CodeInvalidParameter, "is not the source run")
}

// A logged model's large file goes up in parts (MLflow's client does so from 500 MiB) with the
// source run's token, and comes back whole; another run's token cannot send a part.
func TestMLflowLoggedModelMultipartUpload(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ts.createJob(t, "other")
	tok := ts.ctrl.RunToken("r")
	id := ts.createModel(t, tok, map[string]any{"experiment_id": "0", "name": "big"})
	post := func(verb string, body any) mlflowResp {
		b, _ := json.Marshal(body)
		return ts.mlflowDo(t, tok, http.MethodPost, "/api/2.0/mlflow-artifacts/mpu/"+verb+"/0/models/"+id+"/artifacts/data", bytes.NewReader(b))
	}
	r := post("create", map[string]any{"path": "/tmp/model/weights.bin", "num_parts": 2})
	var created struct {
		UploadID    string                    `json:"upload_id"`
		Credentials []mlflowapi.MPUCredential `json:"credentials"`
	}
	if err := json.Unmarshal(r.body, &created); err != nil || r.status != http.StatusOK || len(created.Credentials) != 2 {
		t.Fatalf("create = %d %s", r.status, r.body)
	}
	if r := ts.mlflowDo(t, ts.ctrl.RunToken("other"), http.MethodPut, strings.TrimPrefix(created.Credentials[0].URL, ts.url),
		strings.NewReader("x")); r.status != http.StatusForbidden {
		t.Errorf("a part with another run's token = %d %s, want 403", r.status, r.body)
	}
	chunks := []string{"first part, ", "second"}
	var parts []map[string]any
	for i, c := range created.Credentials {
		r := ts.mlflowDo(t, tok, http.MethodPut, strings.TrimPrefix(c.URL, ts.url), strings.NewReader(chunks[i]))
		if r.status != http.StatusOK {
			t.Fatalf("part %d = %d %s", c.PartNumber, r.status, r.body)
		}
		parts = append(parts, map[string]any{"part_number": c.PartNumber, "etag": r.header.Get("ETag")})
	}
	if r := post("complete", map[string]any{"path": "/tmp/model/weights.bin", "upload_id": created.UploadID, "parts": parts}); r.status != http.StatusOK {
		t.Fatalf("complete = %d %s", r.status, r.body)
	}
	r = ts.mlflowDo(t, tok, http.MethodGet, "/api/2.0/mlflow-artifacts/artifacts/0/models/"+id+"/artifacts/data/weights.bin", nil)
	if r.status != http.StatusOK || string(r.body) != strings.Join(chunks, "") {
		t.Errorf("the assembled file = %d %q", r.status, r.body)
	}
}
