package supervisor

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

// The relay passes a run's request as it is (its own token included) to the server in use; when
// that one cannot be reached it answers 503, which MLflow's client retries, and the retry goes
// to the next server.
func TestRelayMovesToTheNextServer(t *testing.T) {
	var gotAuth, gotBody string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotAuth, gotBody = r.Header.Get("Authorization"), r.URL.Path+" "+string(b)
		_, _ = io.WriteString(w, `{}`)
	}))
	defer up.Close()
	servers := "http://127.0.0.1:1," + up.URL
	s := &Supervisor{conn: &conn{c: api.NewClient(servers, "the supervisor's token")},
		spec: &api.RunSpec{Servers: servers}, direct: true, log: slog.New(slog.DiscardHandler)}
	relay, err := s.startRelay(t.Context())
	if err != nil || !strings.HasPrefix(relay, "http://127.0.0.1:") {
		t.Fatalf("startRelay = %q, %v", relay, err)
	}
	post := func() int {
		req, _ := http.NewRequest(http.MethodPost, relay+"/api/2.0/mlflow/runs/log-metric", strings.NewReader(`{"key":"loss"}`))
		req.Header.Set("Authorization", "Bearer run token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(); code != http.StatusServiceUnavailable {
		t.Fatalf("through the relay to a dead server: %d, want 503", code)
	}
	if code := post(); code != http.StatusOK {
		t.Fatalf("the retry: %d", code)
	}
	if gotAuth != "Bearer run token" || gotBody != `/api/2.0/mlflow/runs/log-metric {"key":"loss"}` {
		t.Errorf("the server got %q, %q", gotAuth, gotBody)
	}

	// A supervisor that reaches the server through a tunnel (or on a workspace with one server)
	// has no relay: the run's client goes where the supervisor does.
	tunnel := &Supervisor{conn: &conn{c: api.NewClient(up.URL, "")}, spec: &api.RunSpec{Servers: "http://a:1,http://b:2"},
		log: slog.New(slog.DiscardHandler)}
	tunnel.direct = tunnel.conn.c.SetServers(tunnel.spec.Servers)
	if u, err := tunnel.startRelay(t.Context()); u != "" || err != nil {
		t.Errorf("a supervisor behind a tunnel got a relay: %q, %v", u, err)
	}
}
