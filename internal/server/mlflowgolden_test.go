package server

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateGolden = flag.Bool("update-mlflow", false, "rewrite the responses of testdata/mlflow/*.json")

// goldenFile is a sequence of HTTP exchanges that MLflow's official Python client sends, as its
// source defines them (MLflow 2.12: mlflow/tracking/fluent.py, mlflow/tracking/client.py,
// mlflow/store/tracking/rest_store.py; JSON from mlflow/protos/service.proto).
type goldenFile struct {
	Client    string     `json:"client"`
	Exchanges []exchange `json:"exchanges"`
}

type exchange struct {
	Call    string            `json:"call"` // the client call that sends it
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   map[string]string `json:"query,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
	AsJob   bool              `json:"as_job,omitempty"`  // with the job's run token (MLFLOW_TRACKING_TOKEN inside a job)
	Capture map[string]string `json:"capture,omitempty"` // variable -> path in the answer
	Status  int               `json:"status"`
	Answer  any               `json:"answer"`
}

// The exchanges are replayed against the real server; answers are compared after ids and
// times are replaced by their names ({{run}}, "<time>").
func TestMLflowGoldenExchanges(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "mlflow", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { replayGolden(t, f) })
	}
}

func replayGolden(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	ts := newTestServer(t)
	job := ts.createJob(t, "golden-job").ID
	vars := map[string]string{"job": job}
	for i := range g.Exchanges {
		x := &g.Exchanges[i]
		status, answer := ts.exchange(t, x, vars)
		for name, path := range x.Capture {
			if v, ok := at(answer, path).(string); ok {
				vars[name] = v
			}
		}
		answer = normalize(answer, vars)
		if *updateGolden {
			x.Status, x.Answer = status, answer
			continue
		}
		if status != x.Status {
			t.Errorf("%s: exchange %d (%s %s): status %d, want %d", file, i, x.Method, x.Path, status, x.Status)
		}
		if diff := cmp.Diff(x.Answer, answer); diff != "" {
			t.Errorf("%s: exchange %d (%s, %s %s) (-golden +got):\n%s", file, i, x.Call, x.Method, x.Path, diff)
		}
	}
	if *updateGolden {
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(g); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var varRef = regexp.MustCompile(`\{\{(\w+)\}\}`)

func expand(s string, vars map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string { return vars[m[2:len(m)-2]] })
}

// exchange sends one request, with {{variables}} expanded, and decodes the answer.
func (ts *testServer) exchange(t *testing.T, x *exchange, vars map[string]string) (int, any) {
	t.Helper()
	u := ts.url + expand(x.Path, vars)
	if len(x.Query) > 0 {
		q := url.Values{}
		for k, v := range x.Query {
			q.Set(k, expand(v, vars))
		}
		u += "?" + q.Encode()
	}
	var body io.Reader
	if len(x.Body) > 0 {
		body = bytes.NewReader([]byte(expand(string(x.Body), vars)))
	}
	req, err := http.NewRequestWithContext(t.Context(), x.Method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	tok := adminToken
	if x.AsJob {
		tok = ts.ctrl.RunToken(vars["job"])
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("User-Agent", "mlflow-python-client/2.12.1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer any
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %v", x.Method, x.Path, err)
	}
	return resp.StatusCode, answer
}

var timeKeys = map[string]bool{"start_time": true, "end_time": true, "creation_time": true, "last_update_time": true,
	"creation_timestamp_ms": true, "last_updated_timestamp_ms": true, "creation_timestamp": true, "last_updated_timestamp": true}

// normalize replaces what differs between runs of the test: times the server chose, and ids
// (by the name of the variable that holds them).
func normalize(v any, vars map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if timeKeys[k] {
				out[k] = "<time>"
				continue
			}
			out[k] = normalize(e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e, vars)
		}
		return out
	case string:
		for name, val := range vars {
			if x == val {
				return "{{" + name + "}}"
			}
			if len(val) >= 8 {
				x = strings.ReplaceAll(x, val, "{{"+name+"}}")
			}
		}
		return x
	}
	return v
}
