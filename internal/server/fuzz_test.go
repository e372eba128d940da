package server

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/sizes"
)

// requestTypes are the bodies the server decodes with readJSON, with their routes.
var requestTypes = []struct {
	route string
	new   func() any
}{
	{"POST /api/blobs/missing", func() any { return new(api.MissingRequest) }},
	{"POST /api/users", func() any { return new(api.CreateUserRequest) }},
	{"PUT /api/users/{name}/role", func() any { return new(api.SetRoleRequest) }},
	{"PUT /api/users/{name}/oidc-subject", func() any { return new(api.SetOIDCSubjectRequest) }},
	{"POST /api/tokens", func() any { return new(api.CreateTokenRequest) }},
	{"POST /api/replica-claims", func() any { return new(api.ReplicaClaimRequest) }},
	{"POST /api/jobs", func() any { return new(api.CreateJobRequest) }},
	{"POST /api/runs/{id}/status", func() any { return new(api.StatusReport) }},
	{"POST /api/runs/{id}/logs", func() any { return new(api.LogBatch) }},
	{"POST /api/runs/{id}/metrics", func() any { return new(api.MetricBatch) }},
	{"POST /api/runs/{id}/artifacts", func() any { return new(api.ArtifactsReport) }},
	{"POST /api/runs/{id}/checkpoint", func() any { return new(api.CheckpointCommit) }},
	{"POST /api/runs/{id}/exec", func() any { return new(api.ExecRequest) }},
	{"POST /api/runs/{id}/exec/{eid}/done", func() any { return new(api.ExecStatus) }},
	{"POST /api/computes", func() any { return new(compute.Spec) }},
	{"PUT /api/computes/{name}", func() any { return new(compute.Spec) }},
	{"PUT /api/settings/{key}", func() any { return new(struct{ Value string }) }},
	{"POST /api/environments", func() any { return new(job.Environment) }},
	{"POST /api/agents/join", func() any { return new(api.JoinRequest) }},
	{"POST /api/agents/{id}/heartbeat", func() any { return new(api.AgentHeartbeat) }},
	{"POST /api/sizes", func() any { return new(sizes.Size) }},
	{"POST /api/2.0/mlflow-artifacts/mpu/create/{path...}", func() any { return new(mlflowapi.MPURequest) }},
	{"POST /studio/login", func() any { return new(api.StudioLogin) }},
	{"POST /api/models", func() any { return new(api.CreateModelRequest) }},
	{"POST /api/models/{name}/archive", func() any { return new(api.ArchiveModelRequest) }},
	{"POST /api/models/{name}/restore", func() any { return new(api.ArchiveModelRequest) }},
	{"PUT /api/models/{name}/aliases/{alias}", func() any { return new(api.SetModelAliasRequest) }},
	{"POST /api/data", func() any { return new(api.CreateDataRequest) }},
	{"PUT /api/connections/{name}", func() any { return new(api.CreateConnectionRequest) }},
	{"POST /api/data-imports", func() any { return new(api.DataImportRequest) }},
	{"POST /api/data/{name}/archive", func() any { return new(api.ArchiveDataRequest) }},
	{"POST /api/data/{name}/restore", func() any { return new(api.ArchiveDataRequest) }},
	{"POST /api/components", func() any { return new(api.CreateComponentRequest) }},
	{"POST /api/components/{name}/archive", func() any { return new(api.ArchiveComponentRequest) }},
	{"POST /api/components/{name}/restore", func() any { return new(api.ArchiveComponentRequest) }},
	{"PUT /api/datastores/{name}", func() any { return new(datastore.Datastore) }},
	{"POST /api/online-endpoints", func() any { return new(serving.Endpoint) }},
	{"PUT /api/online-endpoints/{name}", func() any { return new(serving.Endpoint) }},
	{"PATCH /api/online-endpoints/{name}/traffic", func() any { return new(api.TrafficUpdate) }},
	{"POST /api/online-endpoints/{name}/regenerate-keys", func() any { return new(struct{ KeyType string }) }},
	{"POST /api/online-endpoints/{name}/deployments", func() any { return new(serving.Deployment) }},
	{"PUT /api/online-endpoints/{name}/deployments/{dep}", func() any { return new(serving.Deployment) }},
	{"POST /api/runs/{id}/serving", func() any { return new(api.ServingReport) }},
	{"POST /api/batch-endpoints", func() any { return new(serving.BatchEndpoint) }},
	{"PUT /api/batch-endpoints/{name}", func() any { return new(serving.BatchEndpoint) }},
	{"POST /api/batch-endpoints/{name}/invoke", func() any { return new(api.BatchInvokeRequest) }},
	{"POST /api/batch-endpoints/{name}/deployments", func() any { return new(serving.BatchDeployment) }},
	{"PUT /api/batch-endpoints/{name}/deployments/{dep}", func() any { return new(serving.BatchDeployment) }},
	{"PUT /api/secrets/{name}", func() any { return new(api.SetSecretRequest) }},
	{"PUT /api/secrets/{name}/access", func() any { return new(api.SecretAccess) }},
	{"PUT /api/settings/curated-environments/{name}", func() any { return new(api.CuratedEnvironment) }},
	{"POST /api/workspace/gc", func() any { return new(api.GCRequest) }},
	// The MLflow routes read their body raw, then decode it into their own types (mlflowapi).
	{"POST /api/2.0/mlflow/runs/log-batch", func() any { return new(json.RawMessage) }},
}

// The list above is every type readJSON decodes: one entry per call in the package (a call of
// one of the adapters that call readJSON for their handler, respond.go's decoders, counts as one).
func TestRequestTypesListsEveryDecoder(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// The MLflow API reads its bodies with the server's readJSON, through Bodies.ReadJSON.
	mlflow, err := filepath.Glob(filepath.Join("mlflowapi", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, mlflow...)
	calls := 0
	// assetAPI's routes decode one create and one archive type (archive and restore) per kind
	// they are built for.
	assetCalls, assetKinds := 0, 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if d, ok := n.(*ast.FuncDecl); ok && (decoders[d.Name.Name] || d.Name.Name == "ReadJSON") {
				return false
			}
			if d, ok := n.(*ast.FuncDecl); ok && isAssetAPI(d) {
				assetCalls += countReadJSON(d)
				return false
			}
			if l, ok := n.(*ast.CompositeLit); ok {
				if ix, ok := l.Type.(*ast.IndexListExpr); ok {
					if id, ok := ix.X.(*ast.Ident); ok && id.Name == "assetAPI" {
						assetKinds++
					}
				}
			}
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := calledName(c.Fun); ok && (id == "readJSON" || decoders[id]) {
					calls++
				}
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ReadJSON" {
					calls++
				}
			}
			return true
		})
	}
	calls += assetCalls * assetKinds
	if calls != len(requestTypes) {
		t.Errorf("readJSON is called %d times, requestTypes lists %d: add the new request type to it", calls, len(requestTypes))
	}
}

// decoders are the handler adapters that decode a request's body with readJSON (respond.go).
var decoders = map[string]bool{"decoded": true, "answerBody": true, "noContentBody": true}

// isAssetAPI says whether d is a method of the generic assetAPI.
func isAssetAPI(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) != 1 {
		return false
	}
	ix, ok := d.Recv.List[0].Type.(*ast.IndexListExpr)
	if !ok {
		return false
	}
	id, ok := ix.X.(*ast.Ident)
	return ok && id.Name == "assetAPI"
}

func countReadJSON(d *ast.FuncDecl) int {
	n := 0
	ast.Inspect(d, func(node ast.Node) bool {
		if c, ok := node.(*ast.CallExpr); ok {
			if id, ok := calledName(c.Fun); ok && (id == "readJSON" || decoders[id]) {
				n++
			}
		}
		return true
	})
	return n
}

// calledName is the name of a called function, generic or not.
func calledName(fun ast.Expr) (string, bool) {
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	id, ok := fun.(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

func jsonSeeds(f *testing.F) {
	for _, s := range []string{
		`{"hashes":["` + strings.Repeat("ab", 32) + `"]}`,
		`{"spec":{"name":"x","command":"echo hi","inputs":{"a":{"type":"uri_file","path":"/x"}}},"warnings":["w"]}`,
		`{"state":"Running","reason":"r","exit_code":0,"warnings":["w"],"timings":{"env":1.5}}`,
		`{"file":"std_log.txt","lines":[{"seq":1,"text":"a\u0000\\\"b","time":"2026-01-01T00:00:00Z"}]}`,
		`{"metrics":[{"seq":1,"name":"loss","value":0.5,"step":1}]}`,
		`{"lines":[` + strings.Repeat(`{},`, 200) + `{}]}`,
		`[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]`,
		`{"a":"\"[,{"}`, `"\\"`, `{"hashes":[1,{"x":[]},null,true]}`, ``, `{`, `]`, "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
}

// Every request decoder takes any bytes without panicking, within the memory its route reserves
// for them; and countValues never undercounts.
func FuzzReadJSON(f *testing.F) {
	jsonSeeds(f)
	srv := &Server{}
	f.Fuzz(func(t *testing.T, data []byte) {
		if json.Valid(data) {
			var v any
			if err := json.Unmarshal(data, &v); err == nil && countValues(data) < values(v) {
				t.Fatalf("countValues = %d, the body holds %d", countValues(data), values(v))
			}
		}
		for _, rt := range requestTypes {
			info := bodyInfo{route: rt.route, limit: srv.limitOf(rt.route)}
			r := httptest.NewRequest("POST", "/", bytes.NewReader(data))
			r.Body = &body{r: http.MaxBytesReader(nil, r.Body, info.limit.bytes), info: info,
				rc: http.NewResponseController(nil)}
			r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, info))
			v := rt.new()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_ = readJSON(r, v)
			runtime.ReadMemStats(&after)
			// Slack for what the runtime allocates meanwhile (the fuzzing engine, timers).
			if got, most := after.TotalAlloc-before.TotalAlloc, uint64(info.limit.cost(int64(len(data))))+1<<20; got > most {
				t.Errorf("%s: decoding %d bytes allocated %d bytes, more than its reservation %d", rt.route, len(data), got, most)
			}
		}
	})
}

// values counts the JSON values of a decoded document.
func values(v any) int {
	n := 1
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			n += values(e)
		}
	case map[string]any:
		for _, e := range v {
			n += values(e)
		}
	}
	return n
}

// Any body to any route of the real handler, from the admin or a run, is answered: never a
// panic, never a 500 (a client's bytes are a client's error), and nothing left in blobs/tmp.
func FuzzRequestBodies(f *testing.F) {
	jsonSeeds(f)
	f.Add(bundleSeed(f))
	ts := newTestServer(f)
	ts.createJob(f, "r")
	h := ts.srv.Handler()
	routes := []struct{ method, path string }{
		{"POST", "/api/blobs/missing"}, {"PUT", "/api/blobs/" + strings.Repeat("ab", 32)}, {"POST", "/api/blobs/bundle"},
		{"POST", "/api/jobs"}, {"POST", "/api/runs/r/status"}, {"POST", "/api/runs/r/logs"},
		{"POST", "/api/runs/r/metrics"}, {"POST", "/api/runs/r/artifacts"}, {"POST", "/api/runs/r/exec"},
		{"POST", "/api/runs/r/exec/e1/done"}, {"POST", "/api/computes"}, {"PUT", "/api/computes/fz"},
		{"PUT", "/api/settings/user_max_runs"}, {"POST", "/api/environments"}, {"POST", "/api/sizes"},
		{"POST", "/api/agents/join"}, {"POST", "/api/agents/n1/heartbeat"},
		{"POST", "/api/2.0/mlflow/runs/log-batch"}, {"POST", "/api/2.0/mlflow/runs/create"},
		{"POST", "/api/2.0/mlflow/runs/search"}, {"POST", "/api/2.0/mlflow/runs/update"},
		{"POST", "/api/2.0/mlflow/runs/log-inputs"}, {"POST", "/api/2.0/mlflow/experiments/create"},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, rt := range routes {
			r := httptest.NewRequest(rt.method, rt.path, bytes.NewReader(data))
			r.Header.Set("Authorization", "Bearer "+adminToken)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code >= 500 {
				t.Errorf("%s %s: %d %s", rt.method, rt.path, w.Code, w.Body)
			}
		}
		tmpEmpty(t, ts.blobs)
	})
}

// bundleSeed is a bundle of one blob.
func bundleSeed(f *testing.F) []byte {
	data := []byte("seed")
	h, _, err := blob.HashReader(bytes.NewReader(data))
	if err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	err = blob.WriteBundle(&b, []blob.BundleItem{{Hash: h, Size: int64(len(data)),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}})
	if err != nil {
		f.Fatal(err)
	}
	return b.Bytes()
}
