package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goldenExchanges is a file of testdata/mlflowartifacts: the requests MLflow's Python client
// (HttpArtifactRepository) sends for one call, in order, and what Hangar must answer. {{run}}
// and {{token}} stand for the run and its run token, {{host}} for the server's host:port.
type goldenExchanges struct {
	About     string           `json:"about"`
	Setup     []goldenRequest  `json:"setup"`
	Exchanges []goldenExchange `json:"exchanges"`
}

type goldenExchange struct {
	Request  goldenRequest  `json:"request"`
	Response goldenResponse `json:"response"`
	// Capture names values the server chose (an upload id) after the response's JSON field
	// that holds them; later exchanges use them as {{name}}.
	Capture map[string]string `json:"capture"`
}

type goldenRequest struct {
	Method  string            `json:"method"`
	Target  string            `json:"target"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

type goldenResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	JSON    json.RawMessage   `json:"json"`
	Text    *string           `json:"text"`
}

// TestMLflowArtifactsGolden replays the recorded client sequences against the real server.
func TestMLflowArtifactsGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "mlflowartifacts", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden exchanges: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var g goldenExchanges
			if err := json.Unmarshal(b, &g); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			ts := newTestServer(t)
			const run = "train-1"
			ts.createJob(t, run)
			vars := map[string]string{"run": run, "token": ts.ctrl.RunToken(run), "host": strings.TrimPrefix(ts.url, "http://")}
			fill := func(s string) string {
				for k, v := range vars {
					s = strings.ReplaceAll(s, "{{"+k+"}}", v)
				}
				return s
			}
			for _, s := range g.Setup {
				if r := ts.mlflowDo(t, adminToken, s.Method, fill(s.Target), strings.NewReader(fill(s.Body))); r.status != http.StatusOK {
					t.Fatalf("%s: setup %s %s = %d %s", file, s.Method, s.Target, r.status, r.body)
				}
			}
			for i, x := range g.Exchanges {
				replay(t, ts, file, i, x, fill, vars)
			}
		})
	}
}

func replay(t *testing.T, ts *testServer, file string, i int, x goldenExchange, fill func(string) string, vars map[string]string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), x.Request.Method, ts.url+"/", strings.NewReader(fill(x.Request.Body)))
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = fill(x.Request.Target)
	for k, v := range x.Request.Headers {
		req.Header.Set(k, fill(v))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)
	where := fmt.Sprintf("%s exchange %d (%s %s)", file, i, x.Request.Method, x.Request.Target)
	for name, field := range x.Capture {
		var got map[string]any
		_ = json.Unmarshal(b, &got)
		v, ok := got[field].(string)
		if !ok {
			t.Fatalf("%s: no %s to capture in %s", where, field, body)
		}
		vars[name] = v
	}
	if resp.StatusCode != x.Response.Status {
		t.Errorf("%s: status %d, want %d; body %s", where, resp.StatusCode, x.Response.Status, body)
	}
	for k, v := range x.Response.Headers {
		if got := resp.Header.Get(k); got != fill(v) {
			t.Errorf("%s: header %s = %q, want %q", where, k, got, fill(v))
		}
	}
	switch {
	case x.Response.Text != nil:
		if body != fill(*x.Response.Text) {
			t.Errorf("%s: body %q, want %q", where, body, fill(*x.Response.Text))
		}
	case x.Response.JSON != nil:
		var got, want any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: body %q is not JSON: %v", where, body, err)
		}
		if err := json.Unmarshal([]byte(fill(string(x.Response.JSON))), &want); err != nil {
			t.Fatalf("%s: golden JSON: %v", where, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: body (-want +got):\n%s", where, diff)
		}
	}
}
