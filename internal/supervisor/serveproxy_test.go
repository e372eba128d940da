package supervisor

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving/scoring"
)

// What the proxy in front of an image forwards: only a request carrying the replica's secret,
// exactly once.
func TestAdmit(t *testing.T) {
	const secret = "hrs1.abc"
	for _, tc := range []struct {
		name  string
		given []string
		want  int
	}{
		{"the secret", []string{secret}, 0},
		{"none", nil, http.StatusUnauthorized},
		{"another", []string{"hrs1.abd"}, http.StatusForbidden},
		{"a prefix of it", []string{secret[:len(secret)-1]}, http.StatusForbidden},
		{"longer", []string{secret + "x"}, http.StatusForbidden},
		{"empty", []string{""}, http.StatusForbidden},
		{"twice", []string{secret, secret}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.given {
				h.Add(scoring.SecretHeader, v)
			}
			if got := admit(secret, h); got != tc.want {
				t.Errorf("admit = %d, want %d", got, tc.want)
			}
		})
	}
}

// The proxy in front of an image: a caller without the secret (or with another) is refused and
// the image sees nothing; the router's request reaches it, without the secret.
func TestReplicaProxy(t *testing.T) {
	var seen []http.Header
	image := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Clone())
		io.WriteString(w, "scored "+r.URL.Path)
	}))
	t.Cleanup(image.Close)
	port, err := startReplicaProxy(listen{secret: "hrs1.s", host: "127.0.0.1"}, strings.TrimPrefix(image.URL, "http://"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/predict"
	call := func(secret string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
		if secret != "" {
			req.Header.Set(scoring.SecretHeader, secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := call(""); code != 401 || !strings.Contains(body, "answers only its workspace's router") {
		t.Errorf("without the secret: %d %s", code, body)
	}
	if code, body := call("hrs1.t"); code != 403 || !strings.Contains(body, "secret is wrong") {
		t.Errorf("another secret: %d %s", code, body)
	}
	if len(seen) != 0 {
		t.Fatalf("the image saw %d refused requests", len(seen))
	}
	if code, body := call("hrs1.s"); code != 200 || body != "scored /predict" {
		t.Fatalf("with the secret: %d %s", code, body)
	}
	if len(seen) != 1 || seen[0].Get(scoring.SecretHeader) != "" {
		t.Errorf("the image got %d requests, the secret %q; want one, without it", len(seen), seen[0].Get(scoring.SecretHeader))
	}
}

// A scoring-script or command replica gets its secret and the address to listen on: the
// address on its route to the server (here loopback), or every address on an attached VM; a
// run without a secret from the server does not serve.
func TestPrepareServeListen(t *testing.T) {
	server := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(server.Close)
	for _, tc := range []struct {
		name     string
		replica  *api.ReplicaConfig
		wantHost string
		err      string
	}{
		{"on the server's machine", &api.ReplicaConfig{Secret: "hrs1.s"}, "127.0.0.1", ""},
		{"on an attached VM", &api.ReplicaConfig{Secret: "hrs1.s", AllInterfaces: true}, "0.0.0.0", ""},
		{"no secret", nil, "", "the server sent no replica secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSupervisor(t, server.URL, 0)
			s.spec.Replica = tc.replica
			s.spec.Spec = job.Spec{Serve: &job.Serve{ScoringScript: "score.py"}}
			if err := os.MkdirAll(filepath.Join(s.cfg.Dir, "hangar"), 0o755); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			err := s.serving.prepare(&workspace{dir: t.TempDir()}, map[string]string{}, env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{scoring.SecretEnv: env[scoring.SecretEnv], scoring.HostEnv: env[scoring.HostEnv]}
			want := map[string]string{scoring.SecretEnv: "hrs1.s", scoring.HostEnv: tc.wantHost}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
