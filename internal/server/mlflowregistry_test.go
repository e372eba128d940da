package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
)

// The answers of MLflow's registry as its protos define them (mlflow/protos/model_registry.proto):
// decoded with unknown fields refused, so a misspelt field fails the test (MLflow's client
// would silently drop it).
type (
	pbKV struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	pbModelVersion struct {
		Name                 string   `json:"name"`
		Version              string   `json:"version"`
		CreationTimestamp    int64    `json:"creation_timestamp"`
		LastUpdatedTimestamp int64    `json:"last_updated_timestamp"`
		CurrentStage         string   `json:"current_stage"`
		Description          string   `json:"description"`
		Source               string   `json:"source"`
		RunID                string   `json:"run_id"`
		Status               string   `json:"status"`
		Tags                 []pbKV   `json:"tags"`
		Aliases              []string `json:"aliases"`
	}
	pbAlias struct {
		Alias   string `json:"alias"`
		Version string `json:"version"`
	}
	pbRegisteredModel struct {
		Name                 string           `json:"name"`
		CreationTimestamp    int64            `json:"creation_timestamp"`
		LastUpdatedTimestamp int64            `json:"last_updated_timestamp"`
		Description          string           `json:"description"`
		LatestVersions       []pbModelVersion `json:"latest_versions"`
		Tags                 []pbKV           `json:"tags"`
		Aliases              []pbAlias        `json:"aliases"`
	}
	pbAnswer struct {
		RegisteredModel  *pbRegisteredModel  `json:"registered_model"`
		RegisteredModels []pbRegisteredModel `json:"registered_models"`
		ModelVersion     *pbModelVersion     `json:"model_version"`
		ModelVersions    []pbModelVersion    `json:"model_versions"`
		NextPageToken    string              `json:"next_page_token"`
		ErrorCode        string              `json:"error_code"`
		Message          string              `json:"message"`
	}
)

// registryCall sends one of MLflow's registry requests as its Python client does: a GET's fields
// as the query (repeated keys for repeated fields), a POST's as a JSON body.
func (ts *testServer) registryCall(t *testing.T, token, method, path string, q url.Values, body string) (int, pbAnswer) {
	t.Helper()
	u := ts.url + mlflowapi.Prefix + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out pbAnswer
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, b)
	}
	return resp.StatusCode, out
}

// createModels registers versions the way `hangar model create` does.
func createModels(t *testing.T, ts *testServer, specs ...model.Spec) {
	t.Helper()
	manifest, err := ts.blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range specs {
		if sp.Path == "" {
			sp.Path = "/client/model"
		}
		if _, err := ts.admin.Models.Create(t.Context(), api.CreateModelRequest{Spec: sp, Manifest: manifest}); err != nil {
			t.Fatal(err)
		}
	}
}

func versions(vs []pbModelVersion) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Name+":"+v.Version+":"+v.CurrentStage)
	}
	return strings.Join(s, ",")
}

func modelNames(ms []pbRegisteredModel) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Name)
	}
	return strings.Join(s, ",")
}

// MLflow's registry reads answer from the models `hangar model create` registered: the
// exchanges of MLflow's client (its rest_store's requests, with the prompt filter its
// search_registered_models adds), answers checked against the proto's fields.
func TestMLflowRegistryReadsHangarModels(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts,
		model.Spec{Name: "iris", Meta: asset.Meta{Description: "first", Tags: map[string]string{"team": "vision"}}},
		model.Spec{Name: "iris"},
		model.Spec{Name: "iris", Version: "0.0.9"}, // not an integer: Azure's and Hangar's only
		model.Spec{Name: "iris"},
		model.Spec{Name: "mnist"},
		model.Spec{Name: "Iris-big"},
	)
	if _, err := ts.admin.Models.Archive(t.Context(), "iris", "1", true); err != nil {
		t.Fatal(err)
	}
	get, post := http.MethodGet, http.MethodPost
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}

	st, a := ts.registryCall(t, adminToken, get, "registered-models/get", q("name", "iris"), "")
	rm := a.RegisteredModel
	if st != 200 || rm == nil || rm.Name != "iris" || rm.CreationTimestamp == 0 || rm.LastUpdatedTimestamp < rm.CreationTimestamp ||
		versions(rm.LatestVersions) != "iris:3:None,iris:1:Archived" {
		t.Fatalf("registered-models/get = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, get, "model-versions/get", q("name", "iris", "version", "1"), "")
	if v := a.ModelVersion; st != 200 || v == nil || v.Status != "READY" || v.Description != "first" || v.Source != "local" ||
		v.CurrentStage != "Archived" || len(v.Tags) != 1 || v.Tags[0] != (pbKV{"team", "vision"}) || v.CreationTimestamp == 0 {
		t.Errorf("model-versions/get = %d %+v", st, a.ModelVersion)
	}

	// get_latest_versions: the POST first, its GET form (stages repeated) too.
	st, a = ts.registryCall(t, adminToken, post, "registered-models/get-latest-versions", nil, `{"name": "iris"}`)
	if st != 200 || versions(a.ModelVersions) != "iris:3:None,iris:1:Archived" {
		t.Errorf("get-latest-versions = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, post, "registered-models/get-latest-versions", nil, `{"name": "iris", "stages": ["none"]}`)
	if st != 200 || versions(a.ModelVersions) != "iris:3:None" {
		t.Errorf("get-latest-versions None = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, get, "registered-models/get-latest-versions", q("name", "iris", "stages", "Archived", "stages", "Production"), "")
	if st != 200 || versions(a.ModelVersions) != "iris:1:Archived" {
		t.Errorf("GET get-latest-versions = %d %+v", st, a)
	}

	// search_registered_models as MlflowClient sends it: max_results=100 and the prompt filter.
	prompt := "tag.`mlflow.prompt.is_prompt` != 'true'"
	st, a = ts.registryCall(t, adminToken, get, "registered-models/search", q("filter", prompt, "max_results", "100"), "")
	if st != 200 || modelNames(a.RegisteredModels) != "Iris-big,iris,mnist" || a.NextPageToken != "" {
		t.Errorf("search = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, get, "registered-models/search", q("filter", "name ILIKE 'iris%' AND "+prompt), "")
	if st != 200 || modelNames(a.RegisteredModels) != "Iris-big,iris" {
		t.Errorf("search ILIKE = %d %+v", st, a)
	}
	// Pages: two at a time, each page's token leading to the next.
	var pages []string
	tok := ""
	for range 3 {
		st, a = ts.registryCall(t, adminToken, get, "registered-models/search",
			q("max_results", "2", "order_by", "name DESC", "page_token", tok), "")
		if st != 200 {
			t.Fatalf("page = %d %+v", st, a)
		}
		pages = append(pages, modelNames(a.RegisteredModels))
		if tok = a.NextPageToken; tok == "" {
			break
		}
	}
	if strings.Join(pages, "|") != "mnist,iris|Iris-big" {
		t.Errorf("pages = %q", pages)
	}

	// search_model_versions: MlflowClient's max_results=10000; order_by repeated.
	st, a = ts.registryCall(t, adminToken, get, "model-versions/search",
		q("filter", "name = 'iris' AND version_number >= 2", "max_results", "10000", "order_by", "name ASC", "order_by", "version_number ASC"), "")
	if st != 200 || versions(a.ModelVersions) != "iris:2:None,iris:3:None" {
		t.Errorf("model-versions/search = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, get, "model-versions/search", q("filter", "tags.team = 'vision'"), "")
	if st != 200 || versions(a.ModelVersions) != "iris:1:Archived" {
		t.Errorf("model-versions/search by tag = %d %+v", st, a)
	}

	// A run's token reads the registry (a job resolving models:/iris/3).
	ts.createJob(t, "reader-job")
	if st, a = ts.registryCall(t, ts.ctrl.RunToken("reader-job"), get, "model-versions/get", q("name", "iris", "version", "3"), ""); st != 200 {
		t.Errorf("model-versions/get with a run token = %d %+v", st, a)
	}

	// Errors in MLflow's words and codes, never a 500.
	for _, tc := range []struct {
		method, path string
		q            url.Values
		body         string
		status       int
		code, msg    string
	}{
		{get, "registered-models/get", q("name", "ghost"), "", 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{get, "registered-models/get", nil, "", 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'name'"},
		{get, "model-versions/get", q("name", "iris", "version", "0.0.9"), "", 400, mlflowapi.CodeInvalidParameter, "Parameter 'version' must be an integer, got '0.0.9'."},
		{get, "model-versions/get", q("name", "iris", "version", "8"), "", 404, mlflowapi.CodeNotFound, "Model Version (name=iris, version=8) not found"},
		{get, "model-versions/get", q("name", "iris"), "", 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'version'"},
		{post, "registered-models/get-latest-versions", nil, `{"name": "iris", "stages": ["prod"]}`, 400, mlflowapi.CodeInvalidParameter, "Invalid Model Version stage: prod."},
		{post, "registered-models/get-latest-versions", nil, `{"name": "ghost"}`, 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{get, "registered-models/search", q("filter", "name = 'a' OR name = 'b'"), "", 400, mlflowapi.CodeInvalidParameter, "Invalid clause(s)"},
		{get, "registered-models/search", q("order_by", "version_number"), "", 400, mlflowapi.CodeInvalidParameter, "Invalid order by key"},
		{get, "registered-models/search", q("order_by", "name", "order_by", "name DESC"), "", 400, mlflowapi.CodeInvalidParameter, "duplicate fields"},
		{get, "registered-models/search", q("max_results", "1001"), "", 400, mlflowapi.CodeInvalidParameter, "max_results"},
		{get, "registered-models/search", q("page_token", "blah"), "", 400, mlflowapi.CodeInvalidParameter, "Invalid page token"},
		{get, "model-versions/search", q("max_results", "200001"), "", 400, mlflowapi.CodeInvalidParameter, "max_results"},
		{get, "model-versions/search", q("filter", "run_id = 3"), "", 400, mlflowapi.CodeInvalidParameter, "Expected a quoted string value"},
	} {
		st, a := ts.registryCall(t, adminToken, tc.method, tc.path, tc.q, tc.body)
		if st != tc.status || a.ErrorCode != tc.code || !strings.Contains(a.Message, tc.msg) {
			t.Errorf("%s %s %v %s = %d %s %q; want %d %s %q", tc.method, tc.path, tc.q, tc.body, st, a.ErrorCode, a.Message, tc.status, tc.code, tc.msg)
		}
	}
}

// MLflow's register_model against Hangar: registered-models/create (a name without versions,
// refused when taken), then model-versions/create from a run's artifacts, from inside the job
// with its run token; the version is a Hangar model version (`hangar model show` sees it) over
// the run's files, and MLflow reads it back.
func TestMLflowRegistryCreates(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts, model.Spec{Name: "mnist"}, model.Spec{Name: "semver", Version: "0.0.1"})
	ts.createJob(t, "trainer")
	ts.createJob(t, "other")
	tok := ts.ctrl.RunToken("trainer")
	for _, f := range []string{"model/MLmodel", "model/model.pkl"} {
		if r := ts.mlflowDo(t, tok, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/0/trainer/artifacts/"+f, strings.NewReader("content of "+f)); r.status != 200 {
			t.Fatalf("upload %s: %d %s", f, r.status, r.body)
		}
	}
	post := http.MethodPost

	st, a := ts.registryCall(t, tok, post, "registered-models/create", nil, `{"name": "iris", "description": "flowers"}`)
	if st != 200 || a.RegisteredModel == nil || a.RegisteredModel.Name != "iris" || a.RegisteredModel.CreationTimestamp == 0 || len(a.RegisteredModel.LatestVersions) != 0 {
		t.Fatalf("registered-models/create = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, http.MethodGet, "registered-models/get", url.Values{"name": {"iris"}}, "")
	if st != 200 || a.RegisteredModel == nil || a.RegisteredModel.Name != "iris" {
		t.Errorf("registered-models/get of a model without versions = %d %+v", st, a)
	}

	st, a = ts.registryCall(t, tok, post, "model-versions/create", nil,
		`{"name": "iris", "source": "runs:/trainer/model", "run_id": "trainer", "description": "v1", "tags": [{"key": "k", "value": "v"}]}`)
	mv := a.ModelVersion
	if st != 200 || mv == nil || mv.Version != "1" || mv.Status != "READY" || mv.RunID != "trainer" || mv.Description != "v1" ||
		len(mv.Tags) != 1 || mv.Source != "azureml://jobs/trainer/outputs/artifacts/paths/model" {
		t.Fatalf("model-versions/create = %d %+v", st, a)
	}
	// A name whose only version is a string is registered (create says so), without versions
	// MLflow sees; a version MLflow creates for it is its first integer one.
	st, a = ts.registryCall(t, adminToken, post, "registered-models/create", nil, `{"name": "semver"}`)
	if st != 400 || a.ErrorCode != mlflowapi.CodeAlreadyExists {
		t.Errorf("create semver = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, post, "model-versions/create", nil, `{"name": "semver", "source": "runs:/trainer/model"}`)
	if st != 200 || a.ModelVersion == nil || a.ModelVersion.Version != "1" {
		t.Errorf("model-versions/create for semver = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, post, "model-versions/create", nil, `{"name": "iris", "source": "mlflow-artifacts:/0/trainer/artifacts/model/"}`)
	if st != 200 || a.ModelVersion == nil || a.ModelVersion.Version != "2" {
		t.Fatalf("model-versions/create from mlflow-artifacts = %d %+v", st, a)
	}
	// The versions are Hangar's: the run's two files, an MLflow model, under the folder "model".
	v, err := ts.admin.Models.Get(t.Context(), "iris", "1")
	if err != nil || v.Files != 2 || v.Type != model.MLflowModel || v.Folder != "model" || v.Tags["k"] != "v" {
		t.Errorf("hangar's iris:1 = %+v, %v", v, err)
	}
	st, a = ts.registryCall(t, adminToken, http.MethodGet, "registered-models/get", url.Values{"name": {"iris"}}, "")
	if st != 200 || a.RegisteredModel.Description != "flowers" || versions(a.RegisteredModel.LatestVersions) != "iris:2:None" {
		t.Errorf("registered-models/get after two versions = %d %+v", st, a)
	}

	// models:/iris/1: the download URI is the version's own files in the artifact proxy, for a
	// version from a run as for an upload (mlflowmodelsuri_test.go replays the whole chains).
	for _, tc := range []struct {
		name, version, want string
	}{{"iris", "1", "mlflow-artifacts:/registered-models/iris/1"}, {"iris", "2", "mlflow-artifacts:/registered-models/iris/2"},
		{"mnist", "1", "mlflow-artifacts:/registered-models/mnist/1"}} {
		st, out := ts.mlflowCall(t, adminToken, http.MethodGet, "model-versions/get-download-uri", url.Values{"name": {tc.name}, "version": {tc.version}})
		if st != 200 || out["artifact_uri"] != tc.want || len(out) != 1 {
			t.Errorf("get-download-uri %s %s = %d %v, want %s", tc.name, tc.version, st, out, tc.want)
		}
	}
	list := ts.mlflowDo(t, adminToken, http.MethodGet, listPath("registered-models/iris/1"), nil)
	if list.status != 200 || !strings.Contains(string(list.body), `"path":"MLmodel"`) || !strings.Contains(string(list.body), `"path":"model.pkl"`) {
		t.Errorf("listing the download URI = %d %s", list.status, list.body)
	}
	if f := ts.mlflowDo(t, adminToken, http.MethodGet, "/api/2.0/mlflow-artifacts/artifacts/registered-models/iris/1/model.pkl", nil); f.status != 200 || string(f.body) != "content of model/model.pkl" {
		t.Errorf("a file under the download URI = %d %q", f.status, f.body)
	}
	st, out := ts.mlflowCall(t, adminToken, http.MethodGet, "model-versions/get-download-uri", url.Values{"name": {"iris"}, "version": {"9"}})
	wantMLflowError(t, "get-download-uri of a missing version", st, out, 404, mlflowapi.CodeNotFound, "Model Version (name=iris, version=9) not found")

	for _, tc := range []struct {
		token, path, body string
		status            int
		code, msg         string
	}{
		{adminToken, "registered-models/create", `{"name": "iris"}`, 400, mlflowapi.CodeAlreadyExists, "Registered Model (name=iris) already exists."},
		{adminToken, "registered-models/create", `{"name": "mnist"}`, 400, mlflowapi.CodeAlreadyExists, "Registered Model (name=mnist) already exists."},
		{adminToken, "registered-models/create", `{"name": "my model"}`, 400, mlflowapi.CodeInvalidParameter, "Invalid model name 'my model'"},
		{adminToken, "registered-models/create", `{}`, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'name'"},
		{adminToken, "model-versions/create", `{"name": "ghost", "source": "runs:/trainer/model"}`, 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{adminToken, "model-versions/create", `{"name": "iris"}`, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'source'"},
		{adminToken, "model-versions/create", `{"name": "iris", "source": "s3://bucket/model"}`, 400, mlflowapi.CodeInvalidParameter, "Invalid model version source: 's3://bucket/model'"},
		{adminToken, "model-versions/create", `{"name": "iris", "source": "models:/m-0123"}`, 404, mlflowapi.CodeNotFound, "Logged model with ID 'm-0123' not found."},
		{adminToken, "model-versions/create", `{"name": "iris", "source": "models:/iris/1"}`, 400, mlflowapi.CodeInvalidParameter, "Invalid model version source"},
		{adminToken, "model-versions/create", `{"name": "iris", "source": "runs:/trainer/../other"}`, 400, mlflowapi.CodeInvalidParameter, "without relative path references"},
		{adminToken, "model-versions/create", `{"name": "iris", "source": "runs:/trainer/%2e%2e/x"}`, 400, mlflowapi.CodeInvalidParameter, "percent-escapes"},
		{adminToken, "model-versions/create", `{"name": "iris", "source": "runs:/trainer/nothing-here"}`, 400, mlflowapi.CodeInvalidParameter, "nothing at nothing-here"},
		{adminToken, "model-versions/create", `{"name": "iris", "source": "runs:/trainer/model", "run_id": "other"}`, 400, mlflowapi.CodeInvalidParameter, "is not the run of source"},
		{ts.ctrl.RunToken("other"), "model-versions/create", `{"name": "iris", "source": "runs:/trainer/model"}`, 403, mlflowapi.CodePermissionDenied, "another run"},
	} {
		st, a := ts.registryCall(t, tc.token, post, tc.path, nil, tc.body)
		if st != tc.status || a.ErrorCode != tc.code || !strings.Contains(a.Message, tc.msg) {
			t.Errorf("%s %s = %d %s %q; want %d %s %q", tc.path, tc.body, st, a.ErrorCode, a.Message, tc.status, tc.code, tc.msg)
		}
	}
}

// A registered model's description and a version's description and tags, edited through MLflow,
// are Hangar's: model show sees them. DELETE takes a JSON body (MLflow's Python client) or the
// query (the npm client).
func TestMLflowRegistryEdits(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts, model.Spec{Name: "iris", Meta: asset.Meta{Tags: map[string]string{"old": "x"}}})
	patch, post, del := http.MethodPatch, http.MethodPost, http.MethodDelete

	st, a := ts.registryCall(t, adminToken, patch, "registered-models/update", nil, `{"name": "iris", "description": "flowers"}`)
	if st != 200 || a.RegisteredModel == nil || a.RegisteredModel.Description != "flowers" {
		t.Errorf("registered-models/update = %d %+v", st, a)
	}
	st, a = ts.registryCall(t, adminToken, patch, "model-versions/update", nil, `{"name": "iris", "version": "1", "description": "first"}`)
	if st != 200 || a.ModelVersion == nil || a.ModelVersion.Description != "first" {
		t.Errorf("model-versions/update = %d %+v", st, a)
	}
	for _, body := range []string{`{"name": "iris", "version": "1", "key": "team", "value": "vision"}`, `{"name": "iris", "version": "1", "key": "stage", "value": "qa"}`} {
		if st, a = ts.registryCall(t, adminToken, post, "model-versions/set-tag", nil, body); st != 200 || !reflect.DeepEqual(a, pbAnswer{}) {
			t.Errorf("set-tag %s = %d %+v", body, st, a)
		}
	}
	if st, a = ts.registryCall(t, adminToken, del, "model-versions/delete-tag", nil, `{"name": "iris", "version": "1", "key": "old"}`); st != 200 {
		t.Errorf("delete-tag with a body = %d %+v", st, a)
	}
	if st, a = ts.registryCall(t, adminToken, del, "model-versions/delete-tag", url.Values{"name": {"iris"}, "version": {"1"}, "key": {"stage"}}, ""); st != 200 {
		t.Errorf("delete-tag with a query = %d %+v", st, a)
	}
	if st, a = ts.registryCall(t, adminToken, del, "model-versions/delete-tag", nil, `{"name": "iris", "version": "1", "key": "never-set"}`); st != 200 {
		t.Errorf("delete-tag of a missing tag = %d %+v", st, a)
	}
	v, err := ts.admin.Models.Get(t.Context(), "iris", "1")
	if err != nil || v.Description != "first" || len(v.Tags) != 1 || v.Tags["team"] != "vision" {
		t.Errorf("hangar's iris:1 = %+v, %v", v, err)
	}

	ts.createJob(t, "job")
	for _, tc := range []struct {
		token, method, path, body string
		status                    int
		code, msg                 string
	}{
		{adminToken, patch, "registered-models/update", `{"name": "ghost", "description": "x"}`, 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{adminToken, patch, "model-versions/update", `{"name": "iris", "version": "7", "description": "x"}`, 404, mlflowapi.CodeNotFound, "Model Version (name=iris, version=7) not found"},
		{adminToken, post, "model-versions/set-tag", `{"name": "iris", "version": "1", "key": "a/../b", "value": "x"}`, 400, mlflowapi.CodeInvalidParameter, `Invalid value "a/../b" for parameter 'key'`},
		{adminToken, post, "model-versions/set-tag", `{"name": "iris", "version": "1", "key": "bad!", "value": "x"}`, 400, mlflowapi.CodeInvalidParameter, "Names may only contain"},
		{adminToken, post, "model-versions/set-tag", `{"name": "iris", "version": "1", "value": "x"}`, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'key'"},
		{adminToken, post, "model-versions/set-tag", `{"name": "iris", "version": "one", "key": "k", "value": "x"}`, 400, mlflowapi.CodeInvalidParameter, "must be an integer"},
		{ts.ctrl.RunToken("job"), post, "model-versions/set-tag", `{"name": "iris", "version": "1", "key": "k", "value": "x"}`, 403, mlflowapi.CodePermissionDenied, "run token"},
	} {
		st, a := ts.registryCall(t, tc.token, tc.method, tc.path, nil, tc.body)
		if st != tc.status || a.ErrorCode != tc.code || !strings.Contains(a.Message, tc.msg) {
			t.Errorf("%s %s %s = %d %s %q; want %d %s %q", tc.method, tc.path, tc.body, st, a.ErrorCode, a.Message, tc.status, tc.code, tc.msg)
		}
	}
}

// Aliases: set (moved when set again), read (models:/iris@champion), listed on the registered
// model and the version, deleted with a JSON body or the query; MLflow's rules and codes.
func TestMLflowRegistryAliases(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts, model.Spec{Name: "iris"}, model.Spec{Name: "iris"}, model.Spec{Name: "iris"})
	get, post, del := http.MethodGet, http.MethodPost, http.MethodDelete
	for _, body := range []string{`{"name": "iris", "alias": "champion", "version": "1"}`, `{"name": "iris", "alias": "challenger", "version": "3"}`,
		`{"name": "iris", "alias": "champion", "version": "2"}`} {
		if st, a := ts.registryCall(t, adminToken, post, "registered-models/alias", nil, body); st != 200 {
			t.Fatalf("set alias %s = %d %+v", body, st, a)
		}
	}
	st, a := ts.registryCall(t, adminToken, get, "registered-models/alias", url.Values{"name": {"iris"}, "alias": {"champion"}}, "")
	if st != 200 || a.ModelVersion == nil || a.ModelVersion.Version != "2" || !reflect.DeepEqual(a.ModelVersion.Aliases, []string{"champion"}) {
		t.Errorf("get by alias = %d %+v", st, a.ModelVersion)
	}
	st, a = ts.registryCall(t, adminToken, get, "registered-models/alias", url.Values{"name": {"iris"}, "alias": {"LATEST"}}, "")
	if st != 200 || a.ModelVersion == nil || a.ModelVersion.Version != "3" {
		t.Errorf("get by alias latest = %d %+v", st, a.ModelVersion)
	}
	st, a = ts.registryCall(t, adminToken, get, "registered-models/get", url.Values{"name": {"iris"}}, "")
	if want := []pbAlias{{"challenger", "3"}, {"champion", "2"}}; st != 200 || !reflect.DeepEqual(a.RegisteredModel.Aliases, want) {
		t.Errorf("registered model aliases = %+v, want %+v", a.RegisteredModel, want)
	}
	if st, a = ts.registryCall(t, adminToken, del, "registered-models/alias", nil, `{"name": "iris", "alias": "challenger"}`); st != 200 {
		t.Errorf("delete alias with a body = %d %+v", st, a)
	}
	if st, a = ts.registryCall(t, adminToken, del, "registered-models/alias", url.Values{"name": {"iris"}, "alias": {"champion"}}, ""); st != 200 {
		t.Errorf("delete alias with a query = %d %+v", st, a)
	}
	if st, a = ts.registryCall(t, adminToken, del, "registered-models/alias", nil, `{"name": "iris", "alias": "champion"}`); st != 200 {
		t.Errorf("delete a deleted alias = %d %+v", st, a)
	}
	ts.createJob(t, "job")
	job := ts.ctrl.RunToken("job")
	for _, tc := range []struct {
		token, method string
		q             url.Values
		body          string
		status        int
		code, msg     string
	}{
		{adminToken, get, url.Values{"name": {"iris"}, "alias": {"champion"}}, "", 400, mlflowapi.CodeInvalidParameter, "Registered model alias champion not found."},
		{adminToken, get, url.Values{"name": {"ghost"}, "alias": {"champion"}}, "", 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{adminToken, post, nil, `{"name": "iris", "alias": "Latest", "version": "1"}`, 400, mlflowapi.CodeInvalidParameter, "'latest' alias name (case insensitive) is reserved."},
		{adminToken, post, nil, `{"name": "iris", "alias": "v2", "version": "1"}`, 400, mlflowapi.CodeInvalidParameter, "Version alias name 'v2' is reserved."},
		{adminToken, post, nil, `{"name": "iris", "alias": "my alias", "version": "1"}`, 400, mlflowapi.CodeInvalidParameter, "Invalid alias name: 'my alias'."},
		{adminToken, post, nil, `{"name": "iris", "version": "1"}`, 400, mlflowapi.CodeInvalidParameter, "Registered model alias name cannot be empty."},
		{adminToken, post, nil, `{"name": "iris", "alias": "best", "version": "9"}`, 404, mlflowapi.CodeNotFound, "Model Version (name=iris, version=9) not found"},
		{adminToken, del, nil, `{"name": "ghost", "alias": "best"}`, 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{job, post, nil, `{"name": "iris", "alias": "best", "version": "1"}`, 403, mlflowapi.CodePermissionDenied, "run token"},
	} {
		st, a := ts.registryCall(t, tc.token, tc.method, "registered-models/alias", tc.q, tc.body)
		if st != tc.status || a.ErrorCode != tc.code || !strings.Contains(a.Message, tc.msg) {
			t.Errorf("%s alias %v %s = %d %s %q; want %d %s %q", tc.method, tc.q, tc.body, st, a.ErrorCode, a.Message, tc.status, tc.code, tc.msg)
		}
	}
	if st, _ := ts.registryCall(t, job, get, "registered-models/alias", url.Values{"name": {"iris"}, "alias": {"latest"}}, ""); st != 200 {
		t.Errorf("a run token reading an alias = %d", st)
	}
}

// A registered model's own tags: given at create (MLflow's golden body), set, deleted (body or
// query), searched by; a model tagged as MLflow's prompt drops out of the client's searches.
func TestMLflowRegisteredModelTags(t *testing.T) {
	ts := newTestServer(t)
	get, post, del := http.MethodGet, http.MethodPost, http.MethodDelete
	st, a := ts.registryCall(t, adminToken, post, "registered-models/create", nil,
		`{"name": "model_1", "tags": [{"key": "key", "value": "value"}, {"key": "anotherKey", "value": "some other value"}], "description": "best model ever"}`)
	if want := []pbKV{{"anotherKey", "some other value"}, {"key", "value"}}; st != 200 || !reflect.DeepEqual(a.RegisteredModel.Tags, want) || a.RegisteredModel.Description != "best model ever" {
		t.Fatalf("create with tags = %d %+v", st, a)
	}
	createModels(t, ts, model.Spec{Name: "model_2"})
	for _, body := range []string{`{"name": "model_2", "key": "team", "value": "vision"}`, `{"name": "model_2", "key": "gone", "value": "x"}`,
		`{"name": "model_1", "key": "mlflow.prompt.is_prompt", "value": "true"}`} {
		if st, a := ts.registryCall(t, adminToken, post, "registered-models/set-tag", nil, body); st != 200 {
			t.Fatalf("set-tag %s = %d %+v", body, st, a)
		}
	}
	if st, a := ts.registryCall(t, adminToken, del, "registered-models/delete-tag", url.Values{"name": {"model_2"}, "key": {"gone"}}, ""); st != 200 {
		t.Errorf("delete-tag by query = %d %+v", st, a)
	}
	if st, a := ts.registryCall(t, adminToken, del, "registered-models/delete-tag", nil, `{"name": "model_1", "key": "key"}`); st != 200 {
		t.Errorf("delete-tag by body = %d %+v", st, a)
	}
	prompt := "tag.`mlflow.prompt.is_prompt` != 'true'"
	for _, tc := range []struct{ filter, want string }{
		{prompt, "model_2"},
		{"tags.team = 'vision' AND " + prompt, "model_2"},
		{"tags.team ILIKE 'VIS%'", "model_2"},
		{"tags.key = 'value'", ""},
		{"tags.anotherKey LIKE 'some%'", "model_1"},
	} {
		st, a := ts.registryCall(t, adminToken, get, "registered-models/search", url.Values{"filter": {tc.filter}, "max_results": {"100"}}, "")
		if st != 200 || modelNames(a.RegisteredModels) != tc.want {
			t.Errorf("search %q = %d %q, want %q", tc.filter, st, modelNames(a.RegisteredModels), tc.want)
		}
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code, msg          string
	}{
		{post, "registered-models/set-tag", `{"name": "ghost", "key": "k", "value": "v"}`, 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{post, "registered-models/set-tag", `{"name": "model_2", "key": "../k", "value": "v"}`, 400, mlflowapi.CodeInvalidParameter, "Invalid value \"../k\" for parameter 'key'"},
		{post, "registered-models/create", `{"name": "model_3", "tags": [{"key": "", "value": "v"}]}`, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'key'"},
		{del, "registered-models/delete-tag", `{"name": "ghost", "key": "k"}`, 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
	} {
		st, a := ts.registryCall(t, adminToken, tc.method, tc.path, nil, tc.body)
		if st != tc.status || a.ErrorCode != tc.code || !strings.Contains(a.Message, tc.msg) {
			t.Errorf("%s %s %s = %d %s %q; want %d %s %q", tc.method, tc.path, tc.body, st, a.ErrorCode, a.Message, tc.status, tc.code, tc.msg)
		}
	}
	// A refused create stores nothing.
	if st, _ := ts.registryCall(t, adminToken, get, "registered-models/get", url.Values{"name": {"model_3"}}, ""); st != 404 {
		t.Errorf("model_3 after a refused create = %d, want 404", st)
	}
}

// Stages: Staging and Production kept on the version, Archived is Hangar's archive (and back),
// archive_existing_versions archives the others in the target stage; latest_versions follows.
func TestMLflowRegistryStages(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts, model.Spec{Name: "iris"}, model.Spec{Name: "iris"}, model.Spec{Name: "iris"})
	post, get := http.MethodPost, http.MethodGet
	step := func(body, want string) {
		t.Helper()
		st, a := ts.registryCall(t, adminToken, post, "model-versions/transition-stage", nil, body)
		if st != 200 || a.ModelVersion == nil || a.ModelVersion.CurrentStage != want {
			t.Fatalf("transition %s = %d %+v, want stage %s", body, st, a, want)
		}
	}
	step(`{"name": "iris", "version": "1", "stage": "production", "archive_existing_versions": false}`, "Production")
	step(`{"name": "iris", "version": "2", "stage": "Staging", "archive_existing_versions": false}`, "Staging")
	step(`{"name": "iris", "version": "3", "stage": "Production", "archive_existing_versions": true}`, "Production")
	st, a := ts.registryCall(t, adminToken, get, "registered-models/get", url.Values{"name": {"iris"}}, "")
	if st != 200 || versions(a.RegisteredModel.LatestVersions) != "iris:2:Staging,iris:3:Production,iris:1:Archived" {
		t.Errorf("latest versions = %d %+v", st, a.RegisteredModel)
	}
	// Hangar's view: iris:1 archived (out of model list), the others not.
	if list, err := ts.admin.Models.List(t.Context(), "iris", false); err != nil || len(list) != 2 {
		t.Errorf("model list after archiving 1 through MLflow = %+v, %v", list, err)
	}
	step(`{"name": "iris", "version": "1", "stage": "None", "archive_existing_versions": false}`, "None")
	if v, err := ts.admin.Models.Get(t.Context(), "iris", "1"); err != nil || v.Archived {
		t.Errorf("iris:1 back to None = %+v, %v", v, err)
	}
	st, a = ts.registryCall(t, adminToken, post, "registered-models/get-latest-versions", nil, `{"name": "iris", "stages": ["Production"]}`)
	if st != 200 || versions(a.ModelVersions) != "iris:3:Production" {
		t.Errorf("latest Production = %d %+v", st, a)
	}
	for _, tc := range []struct {
		body, msg string
		status    int
	}{
		{`{"name": "iris", "version": "1", "stage": "prod"}`, "Invalid Model Version stage: prod.", 400},
		{`{"name": "iris", "version": "1", "stage": "Archived", "archive_existing_versions": true}`, "is not an Active stage", 400},
		{`{"name": "iris", "version": "1"}`, "Missing value for required parameter 'stage'", 400},
		{`{"name": "iris", "version": "8", "stage": "Staging"}`, "Model Version (name=iris, version=8) not found", 404},
	} {
		st, a := ts.registryCall(t, adminToken, post, "model-versions/transition-stage", nil, tc.body)
		if st != tc.status || !strings.Contains(a.Message, tc.msg) {
			t.Errorf("transition %s = %d %+v; want %d %q", tc.body, st, a, tc.status, tc.msg)
		}
	}
}

// MLflow 1.x clients call the registry under /api/2.0/preview/mlflow/: the same answers.
func TestMLflowPreviewPaths(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts, model.Spec{Name: "iris"})
	r := ts.mlflowDo(t, adminToken, http.MethodGet, "/api/2.0/preview/mlflow/registered-models/get?name=iris", nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"name":"iris"`) {
		t.Errorf("preview registered-models/get = %d %s", r.status, r.body)
	}
	r = ts.mlflowDo(t, adminToken, http.MethodGet, "/api/2.0/preview/mlflow/no-such/path", nil)
	if r.status != 404 || !strings.Contains(string(r.body), mlflowapi.CodeEndpointNotFound) {
		t.Errorf("preview unknown path = %d %s", r.status, r.body)
	}
	if r = ts.mlflowDo(t, "", http.MethodGet, "/api/2.0/preview/mlflow/registered-models/get?name=iris", nil); r.status != 401 {
		t.Errorf("preview without a token = %d %s", r.status, r.body)
	}
}
