package server

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
)

// registered-models/rename moves the versions, tags and aliases (MLflow's golden body);
// model-versions/delete (a JSON body as MLflow's Python client sends it, or the query as the npm
// client does) and registered-models/delete leave tombstones: gone from MLflow, model list,
// references and @latest, numbers never given again; the name registered again goes on from them.
func TestMLflowRegistryRenameAndDelete(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts, model.Spec{Name: "model_1"}, model.Spec{Name: "model_1"}, model.Spec{Name: "model_1"})
	get, post, del := http.MethodGet, http.MethodPost, http.MethodDelete
	call := func(method, path string, q url.Values, body string, want int) pbAnswer {
		t.Helper()
		st, a := ts.registryCall(t, adminToken, method, path, q, body)
		if st != want {
			t.Fatalf("%s %s %v %s = %d %+v, want %d", method, path, q, body, st, a, want)
		}
		return a
	}
	call(post, "registered-models/alias", nil, `{"name": "model_1", "alias": "champion", "version": "3"}`, 200)
	call(post, "registered-models/set-tag", nil, `{"name": "model_1", "key": "team", "value": "vision"}`, 200)

	a := call(post, "registered-models/rename", nil, `{"name": "model_1", "new_name": "model_2"}`, 200)
	if m := a.RegisteredModel; m == nil || m.Name != "model_2" || versions(m.LatestVersions) != "model_2:3:None" ||
		!reflect.DeepEqual(m.Aliases, []pbAlias{{"champion", "3"}}) || !reflect.DeepEqual(m.Tags, []pbKV{{"team", "vision"}}) {
		t.Errorf("rename = %+v", a.RegisteredModel)
	}
	call(get, "registered-models/get", url.Values{"name": {"model_1"}}, "", 404)
	if v, err := ts.admin.Models.Get(t.Context(), "model_2", "3"); err != nil || !reflect.DeepEqual(v.Aliases, []string{"champion"}) {
		t.Errorf("hangar's model_2:3 = %+v, %v", v, err)
	}

	// A version deleted with a JSON body: gone everywhere, its alias with it.
	if a := call(del, "model-versions/delete", nil, `{"name": "model_2", "version": "3"}`, 200); !reflect.DeepEqual(a, pbAnswer{}) {
		t.Errorf("model-versions/delete = %+v, want {}", a)
	}
	a = call(get, "model-versions/get", url.Values{"name": {"model_2"}, "version": {"3"}}, "", 404)
	if a.ErrorCode != mlflowapi.CodeNotFound || a.Message != "Model Version (name=model_2, version=3) not found" {
		t.Errorf("get a deleted version = %+v", a)
	}
	call(get, "registered-models/alias", url.Values{"name": {"model_2"}, "alias": {"champion"}}, "", 400)
	if a := call(get, "model-versions/search", url.Values{"filter": {"name = 'model_2'"}}, "", 200); versions(a.ModelVersions) != "model_2:2:None,model_2:1:None" {
		t.Errorf("versions after deleting 3 = %s", versions(a.ModelVersions))
	}
	if v, err := ts.admin.Models.Get(t.Context(), "model_2", "latest"); err != nil || v.Version != "2" {
		t.Errorf("model_2@latest = %+v, %v", v, err)
	}
	// The npm client's DELETE: the fields in the query.
	call(del, "model-versions/delete", url.Values{"name": {"model_2"}, "version": {"2"}}, "", 200)
	createModels(t, ts, model.Spec{Name: "model_2"})
	if a := call(get, "registered-models/get", url.Values{"name": {"model_2"}}, "", 200); versions(a.RegisteredModel.LatestVersions) != "model_2:4:None" {
		t.Errorf("the version after deleted 3 = %+v, want 4", a.RegisteredModel.LatestVersions)
	}

	// The registered model goes with every version; registered again, its numbers go on.
	call(del, "registered-models/delete", nil, `{"name": "model_2"}`, 200)
	call(get, "registered-models/get", url.Values{"name": {"model_2"}}, "", 404)
	if a := call(get, "registered-models/search", url.Values{"max_results": {"100"}}, "", 200); len(a.RegisteredModels) != 0 {
		t.Errorf("search after the delete = %+v", a.RegisteredModels)
	}
	if list, err := ts.admin.Models.List(t.Context(), "model_2", true); err != nil || len(list) != 0 {
		t.Errorf("model list after the delete = %+v, %v", list, err)
	}
	call(post, "registered-models/create", nil, `{"name": "model_2"}`, 200)
	createModels(t, ts, model.Spec{Name: "model_2"})
	if a := call(get, "model-versions/get", url.Values{"name": {"model_2"}, "version": {"5"}}, "", 200); a.ModelVersion.Version != "5" {
		t.Errorf("first version of model_2 registered again = %+v", a.ModelVersion)
	}
	// Each rename and delete is in the audit log, the query's too.
	entries, err := ts.store.Access.Audit(t.Context(), store.AuditFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "model.") {
			got = append(got, e.Action+" "+e.Object+" "+e.Detail)
		}
	}
	slices.Sort(got)
	want := []string{"model.delete 2.0/mlflow/model-versions/delete name=model_2&version=2",
		"model.delete 2.0/mlflow/model-versions/delete/model_2 ", "model.delete 2.0/mlflow/registered-models/delete/model_2 ",
		"model.rename 2.0/mlflow/registered-models/rename/model_1 "}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

// The rename's and deletes' refusals, in MLflow's error shape: missing fields, taken and bad
// names, versions MLflow cannot name, a run's token, and a rename while deployments (online and
// batch) name the model by reference, listed (409 RESOURCE_CONFLICT).
func TestMLflowRegistryRenameAndDeleteRefused(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts, model.Spec{Name: "iris"}, model.Spec{Name: "iris", Version: "0.0.1"}, model.Spec{Name: "mnist"})
	at := time.Now()
	if err := ts.store.Serving.PutEndpoint(t.Context(), store.EndpointRecord{Spec: serving.Endpoint{Name: "ep"}, CreatedAt: at, UpdatedAt: at}, true); err != nil {
		t.Fatal(err)
	}
	d := serving.Deployment{Name: "blue", Endpoint: "ep", Model: serving.ModelRef{Ref: "mnist:1"}}
	if _, err := ts.store.Serving.PutDeployment(t.Context(), store.DeploymentRecord{Spec: d, CreatedAt: at, UpdatedAt: at}, true); err != nil {
		t.Fatal(err)
	}
	ts.createJob(t, "job")
	job := ts.ctrl.RunToken("job")
	post, del := http.MethodPost, http.MethodDelete
	for _, tc := range []struct {
		token, method, path, body string
		status                    int
		code, msg                 string
	}{
		{adminToken, post, "registered-models/rename", `{"name": "iris"}`, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'new_name'"},
		{adminToken, post, "registered-models/rename", `{"name": "iris", "new_name": "mnist"}`, 400, mlflowapi.CodeAlreadyExists, "Registered Model (name=mnist) already exists."},
		{adminToken, post, "registered-models/rename", `{"name": "ghost", "new_name": "x"}`, 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{adminToken, post, "registered-models/rename", `{"name": "iris", "new_name": "my iris"}`, 400, mlflowapi.CodeInvalidParameter, "Invalid model name 'my iris'"},
		{adminToken, post, "registered-models/rename", `{"name": "mnist", "new_name": "digits"}`, 409, mlflowapi.CodeConflict,
			"Registered Model (name=mnist) cannot be renamed while deployments name it by reference: online deployment blue of endpoint ep (mnist:1)"},
		{adminToken, del, "model-versions/delete", `{"name": "iris", "version": "0.0.1"}`, 400, mlflowapi.CodeInvalidParameter, "Parameter 'version' must be an integer, got '0.0.1'."},
		{adminToken, del, "model-versions/delete", `{"name": "iris", "version": "9"}`, 404, mlflowapi.CodeNotFound, "Model Version (name=iris, version=9) not found"},
		{adminToken, del, "model-versions/delete", `{"name": "iris"}`, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'version'"},
		{adminToken, del, "registered-models/delete", `{"name": "ghost"}`, 404, mlflowapi.CodeNotFound, "Registered Model with name=ghost not found"},
		{adminToken, del, "registered-models/delete", `{}`, 400, mlflowapi.CodeInvalidParameter, "Missing value for required parameter 'name'"},
		{job, post, "registered-models/rename", `{"name": "iris", "new_name": "x"}`, 403, mlflowapi.CodePermissionDenied, "run token"},
		{job, del, "model-versions/delete", `{"name": "iris", "version": "1"}`, 403, mlflowapi.CodePermissionDenied, "run token"},
		{job, del, "registered-models/delete", `{"name": "iris"}`, 403, mlflowapi.CodePermissionDenied, "run token"},
	} {
		st, a := ts.registryCall(t, tc.token, tc.method, tc.path, nil, tc.body)
		if st != tc.status || a.ErrorCode != tc.code || !strings.Contains(a.Message, tc.msg) {
			t.Errorf("%s %s %s = %d %s %q; want %d %s %q", tc.method, tc.path, tc.body, st, a.ErrorCode, a.Message, tc.status, tc.code, tc.msg)
		}
	}
	// Nothing refused changed anything: both models as they were, iris's string version too.
	for name, want := range map[string]int{"iris": 2, "mnist": 1} {
		if list, err := ts.admin.Models.List(t.Context(), name, true); err != nil || len(list) != want {
			t.Errorf("model list %s = %+v, %v", name, list, err)
		}
	}
}

// hangar model delete's routes: a version, then the whole model (its string versions too);
// each answered 204, and a missing one 404.
func TestModelDeleteRoutes(t *testing.T) {
	ts := newTestServer(t)
	createModels(t, ts, model.Spec{Name: "mnist"}, model.Spec{Name: "mnist"}, model.Spec{Name: "mnist", Version: "0.0.1"})
	ctx := t.Context()
	if err := ts.admin.Models.Delete(ctx, "mnist", "2"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.admin.Models.Get(ctx, "mnist", "2"); !api.IsNotFound(err) {
		t.Errorf("get a deleted version = %v", err)
	}
	if err := ts.admin.Models.Delete(ctx, "mnist", "2"); !api.IsNotFound(err) {
		t.Errorf("delete it again = %v", err)
	}
	if err := ts.admin.Models.Delete(ctx, "mnist", ""); err != nil {
		t.Fatal(err)
	}
	if list, err := ts.admin.Models.List(ctx, "", true); err != nil || len(list) != 0 {
		t.Errorf("model list after deleting mnist = %+v, %v", list, err)
	}
	if err := ts.admin.Models.Delete(ctx, "mnist", ""); !api.IsNotFound(err) {
		t.Errorf("delete a deleted model = %v", err)
	}
}
