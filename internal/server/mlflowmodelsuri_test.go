package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// manifestOf stores files (path → content) as blobs and their manifest, and returns the
// manifest's hash: a model folder as `hangar model create` uploads it.
func manifestOf(t *testing.T, ts *testServer, files map[string]string) string {
	t.Helper()
	m := &snapshot.Manifest{}
	dirs := map[string]bool{}
	for p, content := range files {
		h, err := ts.blobs.PutBytes([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		m.Entries = append(m.Entries, snapshot.Entry{Path: p, Type: snapshot.TypeFile, Hash: h, Size: int64(len(content)), Mode: 0o644})
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			m.Entries = append(m.Entries, snapshot.Entry{Path: d, Type: snapshot.TypeDir, Mode: 0o755})
		}
	}
	data, _, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	h, err := ts.blobs.PutBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// modelsClient replays what MLflow's Python client sends to load a models:/ URI
// (mlflow/store/artifact/utils/models.py get_model_name_and_version, models_artifact_repo.py,
// http_artifact_repo.py, and ArtifactRepository.download_artifacts' walk), and records each
// request as "METHOD path", the golden transcript.
type modelsClient struct {
	t      *testing.T
	ts     *testServer
	token  string
	calls  []string
	failed bool
}

func (c *modelsClient) call(method, p string, in any) map[string]any {
	c.t.Helper()
	c.calls = append(c.calls, method+" "+p)
	st, out := c.ts.mlflowCall(c.t, c.token, method, p, in)
	if st != http.StatusOK {
		c.t.Errorf("%s %s %v = %d %v", method, p, in, st, out)
		c.failed = true
	}
	return out
}

// downloadURI resolves a models:/ URI (name/version, name/latest, name/<stage>, name@alias, with
// a path below it) to the registry's download URI and the path under it, as the client does.
func (c *modelsClient) downloadURI(uri string) (string, string) {
	c.t.Helper()
	rest := strings.TrimPrefix(uri, "models:/")
	parts := strings.SplitN(rest, "/", 3)
	cut := 2 // split_models_uri: models:/<name>@<alias>/<path>, models:/<name>/<suffix>/<path>
	if strings.Contains(parts[0], "@") {
		cut = 1
		parts = strings.SplitN(rest, "/", 2)
	}
	sub := ""
	if len(parts) > cut {
		sub = parts[cut]
	}
	var name, version string
	switch {
	case cut == 1:
		i := strings.LastIndex(parts[0], "@")
		name = parts[0][:i]
		out := c.call(http.MethodGet, "registered-models/alias", url.Values{"name": {name}, "alias": {parts[0][i+1:]}})
		version, _ = at(out, "model_version.version").(string)
	case isDigits(parts[1]):
		name, version = parts[0], parts[1]
		// pyfunc.load_model reads the version's model_id first (_parse_model_id_if_present).
		c.call(http.MethodGet, "model-versions/get", url.Values{"name": {name}, "version": {version}})
	default:
		name = parts[0]
		body := map[string]any{"name": name}
		if !strings.EqualFold(parts[1], "latest") {
			body["stages"] = []string{parts[1]}
		}
		out := c.call(http.MethodPost, "registered-models/get-latest-versions", body)
		best := -1
		for _, v := range at(out, "model_versions").([]any) {
			n, _ := strconv.Atoi(v.(map[string]any)["version"].(string))
			best = max(best, n)
		}
		version = strconv.Itoa(best)
	}
	out := c.call(http.MethodGet, "model-versions/get-download-uri", url.Values{"name": {name}, "version": {version}})
	au, _ := out["artifact_uri"].(string)
	return au, sub
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// download walks an mlflow-artifacts URI's tree below sub as download_artifacts does (list, a
// directory's children listed in turn, every file fetched), and returns the files by their path
// under the URI.
func (c *modelsClient) download(uri, sub string) map[string]string {
	c.t.Helper()
	root, ok := strings.CutPrefix(uri, "mlflow-artifacts:/")
	if !ok {
		c.t.Fatalf("download URI %q is not mlflow-artifacts:/", uri)
	}
	files := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		p := root
		if dir != "" {
			p += "/" + dir
		}
		target := "/api/2.0/mlflow-artifacts/artifacts?" + url.Values{"path": {p}}.Encode()
		c.calls = append(c.calls, "GET artifacts?path="+p)
		r := c.ts.mlflowDo(c.t, c.token, http.MethodGet, target, nil)
		var out struct {
			Files []mlflowapi.FileInfo `json:"files"`
		}
		if err := jsonStrict(r.body, &out); r.status != http.StatusOK || err != nil {
			c.t.Fatalf("list %s = %d %s (%v)", p, r.status, r.body, err)
		}
		// The client sorts a listing by path (HttpArtifactRepository.list_artifacts).
		slices.SortFunc(out.Files, func(a, b mlflowapi.FileInfo) int { return strings.Compare(a.Path, b.Path) })
		for _, f := range out.Files {
			rel := f.Path
			if dir != "" {
				rel = dir + "/" + f.Path
			}
			if f.IsDir {
				walk(rel)
				continue
			}
			c.calls = append(c.calls, "GET artifacts/"+root+"/"+rel)
			fr := c.ts.mlflowDo(c.t, c.token, http.MethodGet, "/api/2.0/mlflow-artifacts/artifacts/"+root+"/"+rel, nil)
			if fr.status != http.StatusOK || f.FileSize == nil || int64(len(fr.body)) != *f.FileSize {
				c.t.Errorf("GET %s = %d %q; listed with size %v", rel, fr.status, fr.body, f.FileSize)
			}
			files[rel] = string(fr.body)
		}
	}
	walk(sub)
	return files
}

// TestMLflowModelsURIChains replays how MLflow's client loads models:/ URIs
// (mlflow.pyfunc.load_model, mlflow.artifacts.download_artifacts) against the server, for the
// versions every way Hangar registers them: uploaded by `hangar model create`, from a job's named
// output, from a run's MLflow artifacts (model-versions/create). Each chain's requests are
// MLflow's (the golden transcript), and the downloaded bytes are the version's, for a user of
// any role and a run's token of another job.
func TestMLflowModelsURIChains(t *testing.T) {
	ts := newTestServer(t)
	uploaded := map[string]string{"MLmodel": "flavors: {python_function: {}}\n", "model.pkl": "pickle 1", "sub/conda.yaml": "name: env\n", "sub/deep/x.txt": "deep"}
	if _, err := ts.admin.Models.Create(t.Context(), api.CreateModelRequest{
		Spec:     model.Spec{Name: "iris", Type: model.MLflowModel, Path: "/client/iris-model"},
		Manifest: manifestOf(t, ts, uploaded)}); err != nil {
		t.Fatal(err)
	}
	named := map[string]string{"MLmodel": "flavors: {sklearn: {}}\n", "model.pkl": "pickle 2"}
	ts.createJob(t, "trainer")
	if _, err := ts.runClient("trainer").Runs.ReportArtifacts(t.Context(), "trainer",
		api.ArtifactsReport{Artifacts: manifestOf(t, ts, map[string]string{"outputs/x": "x"}), NamedOutputs: map[string]string{"model": manifestOf(t, ts, named)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.admin.Models.Create(t.Context(), api.CreateModelRequest{
		Spec: model.Spec{Name: "iris", Type: model.MLflowModel, Path: "azureml://jobs/trainer/outputs/model"}}); err != nil {
		t.Fatal(err)
	}
	ts.createJob(t, "logger")
	logged := map[string]string{"MLmodel": "flavors: {python_function: {loader_module: mlflow.sklearn}}\n", "model.pkl": "pickle 3", "requirements.txt": "scikit-learn\n"}
	logTok := ts.ctrl.RunToken("logger")
	for p, c := range logged {
		if r := ts.mlflowDo(t, logTok, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/0/logger/artifacts/model/"+p, strings.NewReader(c)); r.status != 200 {
			t.Fatalf("upload %s = %d %s", p, r.status, r.body)
		}
	}
	if st, a := ts.registryCall(t, logTok, http.MethodPost, "model-versions/create", nil, `{"name": "iris", "source": "runs:/logger/model", "run_id": "logger"}`); st != 200 || a.ModelVersion.Version != "3" {
		t.Fatalf("model-versions/create = %d %+v", st, a)
	}
	// What the run logs after the registration is not the version's.
	if r := ts.mlflowDo(t, logTok, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/0/logger/artifacts/model/model.pkl", strings.NewReader("retrained")); r.status != 200 {
		t.Fatalf("re-upload = %d %s", r.status, r.body)
	}
	// A string version is Hangar's only: MLflow does not see it.
	createModels(t, ts, model.Spec{Name: "iris", Version: "0.0.1"})
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "registered-models/alias", `{"name": "iris", "alias": "champion", "version": "1"}`},
		{http.MethodPost, "model-versions/transition-stage", `{"name": "iris", "version": "2", "stage": "Production", "archive_existing_versions": false}`},
	} {
		if st, a := ts.registryCall(t, adminToken, c.method, c.path, nil, c.body); st != 200 {
			t.Fatalf("%s = %d %+v", c.path, st, a)
		}
	}

	under := func(files map[string]string, dir string) map[string]string {
		out := map[string]string{}
		for p, c := range files {
			if strings.HasPrefix(p, dir+"/") {
				out[p] = c
			}
		}
		return out
	}
	tests := []struct {
		uri      string
		requests []string // before the artifact walk
		version  string
		files    map[string]string
		sub      string
	}{
		{"models:/iris/1", []string{"GET model-versions/get", "GET model-versions/get-download-uri"}, "1", uploaded, ""},
		{"models:/iris/2", []string{"GET model-versions/get", "GET model-versions/get-download-uri"}, "2", named, ""},
		{"models:/iris/3", []string{"GET model-versions/get", "GET model-versions/get-download-uri"}, "3", logged, ""},
		{"models:/iris/latest", []string{"POST registered-models/get-latest-versions", "GET model-versions/get-download-uri"}, "3", logged, ""},
		{"models:/iris/LATEST", []string{"POST registered-models/get-latest-versions", "GET model-versions/get-download-uri"}, "3", logged, ""},
		{"models:/iris/Production", []string{"POST registered-models/get-latest-versions", "GET model-versions/get-download-uri"}, "2", named, ""},
		{"models:/iris/production", []string{"POST registered-models/get-latest-versions", "GET model-versions/get-download-uri"}, "2", named, ""},
		{"models:/iris@champion", []string{"GET registered-models/alias", "GET model-versions/get-download-uri"}, "1", uploaded, ""},
		{"models:/iris/1/sub", []string{"GET model-versions/get", "GET model-versions/get-download-uri"}, "1", under(uploaded, "sub"), "sub"},
		{"models:/iris@champion/sub/deep", []string{"GET registered-models/alias", "GET model-versions/get-download-uri"}, "1", under(uploaded, "sub/deep"), "sub/deep"},
	}
	ts.createJob(t, "scorer")
	callers := map[string]string{
		"the workspace token":   adminToken,
		"a reader":              newUserToken(t, ts, "rita", api.RoleReader),
		"another job's token":   ts.ctrl.RunToken("scorer"),
		"the logging job token": logTok,
	}
	for who, tok := range callers {
		for _, tc := range tests {
			t.Run(who+"/"+tc.uri, func(t *testing.T) {
				c := &modelsClient{t: t, ts: ts, token: tok}
				uri, sub := c.downloadURI(tc.uri)
				if want := "mlflow-artifacts:/registered-models/iris/" + tc.version; uri != want || sub != tc.sub {
					t.Fatalf("%s resolves to %q, %q; want %q, %q", tc.uri, uri, sub, want, tc.sub)
				}
				got := c.download(uri, sub)
				if diff := cmp.Diff(tc.files, got); diff != "" {
					t.Errorf("%s downloads (-want +got):\n%s", tc.uri, diff)
				}
				want := slices.Clone(tc.requests)
				want = append(want, walkCalls(tc.version, tc.files, sub)...)
				if diff := cmp.Diff(want, c.calls); diff != "" {
					t.Errorf("%s: requests (-golden +sent):\n%s", tc.uri, diff)
				}
			})
		}
	}
}

// walkCalls is the golden transcript of download_artifacts over files (path → content) of
// version v of iris below sub: each directory listed before its files and subdirectories are
// fetched, in the sorted order of the listing.
func walkCalls(v string, files map[string]string, sub string) []string {
	root := "registered-models/iris/" + v
	var calls []string
	var walk func(dir string)
	walk = func(dir string) {
		p := root
		if dir != "" {
			p += "/" + dir
		}
		calls = append(calls, "GET artifacts?path="+p)
		prefix := ""
		if dir != "" {
			prefix = dir + "/"
		}
		var names []string
		seen := map[string]bool{}
		for f := range files {
			rest, ok := strings.CutPrefix(f, prefix)
			if !ok {
				continue
			}
			n, _, _ := strings.Cut(rest, "/")
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			if _, isFile := files[prefix+n]; isFile {
				calls = append(calls, "GET artifacts/"+root+"/"+prefix+n)
			} else {
				walk(prefix + n)
			}
		}
	}
	walk(sub)
	return calls
}

// jsonStrict decodes b into v, refusing fields v does not have.
func jsonStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
