package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
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
		Name                 string `json:"name"`
		Version              string `json:"version"`
		CreationTimestamp    int64  `json:"creation_timestamp"`
		LastUpdatedTimestamp int64  `json:"last_updated_timestamp"`
		CurrentStage         string `json:"current_stage"`
		Description          string `json:"description"`
		Source               string `json:"source"`
		RunID                string `json:"run_id"`
		Status               string `json:"status"`
		Tags                 []pbKV `json:"tags"`
	}
	pbRegisteredModel struct {
		Name                 string           `json:"name"`
		CreationTimestamp    int64            `json:"creation_timestamp"`
		LastUpdatedTimestamp int64            `json:"last_updated_timestamp"`
		LatestVersions       []pbModelVersion `json:"latest_versions"`
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
