package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// sidecarFixture is entryFixture for a supervisor sidecar of a Deployment's pod: its config is a
// claim file, and the server hands out run r1 (whose config names the gate) once, then nothing.
func sidecarFixture(t *testing.T) (PodEntry, string, string) {
	t.Helper()
	old := claimBackoff
	claimBackoff = [2]time.Duration{time.Millisecond, 5 * time.Millisecond}
	t.Cleanup(func() { claimBackoff = old })
	e, runDir := entryFixture(t, "")
	gate := filepath.Join(filepath.Dir(runDir), "serve-gate")
	var claims atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if claims.Add(1) > 1 {
			http.Error(w, `{"error": "no replica run to claim"}`, http.StatusConflict)
			return
		}
		_ = json.NewEncoder(w).Encode(api.ReplicaClaim{RunID: "r1", Config: api.SupervisorConfig{RunID: "r1", Token: "t", Dir: runDir, ServeGate: gate}})
	}))
	t.Cleanup(srv.Close)
	cfg, _ := json.Marshal(map[string]any{"claim": ClaimConfig{ServerURL: srv.URL, Token: "claim"}})
	if err := os.Chmod(e.Config, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.Config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return e, runDir, gate
}

// A sidecar whose claimed run ended before the image started closes the gate with the reason
// (the gate container then fails, and Kubernetes retries it), writes the run's end, and claims
// the next run rather than exit: a sidecar that exits is started again.
func TestPodEntrySidecarClosesTheGate(t *testing.T) {
	t.Setenv("SUPERVISE", "die")
	e, _, gate := sidecarFixture(t)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan int)
	go func() { done <- e.Run(ctx) }()
	var text []byte
	testwait.Within(t, 30*time.Second, "the gate file", func() bool {
		var err error
		text, err = os.ReadFile(gate)
		return err == nil
	})
	if !strings.Contains(string(text), "the run ended before the image could start: Failed: the supervisor ended without a result") {
		t.Errorf("gate %q", text)
	}
	if r := terminationResult(t, e); r.State != job.Failed {
		t.Errorf("termination message %+v, written before Kubernetes stops the sidecar", r)
	}
	select {
	case code := <-done:
		t.Fatalf("the sidecar exited (%d) before it was stopped", code)
	default:
	}
	stop() // as Kubernetes' SIGTERM would
	<-done
	var out bytes.Buffer
	if code := AwaitGate(t.Context(), gate, &out); code != 1 || !strings.Contains(out.String(), "the supervisor did not start the image: the run ended before") {
		t.Errorf("the gate container: exit %d, %q", code, out.String())
	}
}

// The claimed run's model is linked, relatively, where every pod's image container mounts it
// (the kubelet resolves the link inside the volume); a link of an earlier run is replaced, and a
// model outside the link's folder is refused.
func TestLinkModel(t *testing.T) {
	runs := t.TempDir()
	link := filepath.Join(runs, "serve-model")
	for _, run := range []string{"r1", "r2"} {
		model := filepath.Join(runs, run, "inputs", "model")
		if err := os.MkdirAll(model, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(model, "w.txt"), []byte(run), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := linkModel(model, link); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.Readlink(link); got != filepath.Join(run, "inputs", "model") {
			t.Errorf("link -> %q, want relative to %s's model", got, run)
		}
		if b, _ := os.ReadFile(filepath.Join(link, "w.txt")); string(b) != run {
			t.Errorf("through the link: %q, want %s", b, run)
		}
	}
	if err := linkModel(t.TempDir(), link); err == nil || !strings.Contains(err.Error(), "outside the folder") {
		t.Errorf("a model outside the volume: %v", err)
	}
}

// The relay copies the image's lines (their Kubernetes time stamps dropped) into the log and
// asks next from the last line it got.
func TestLogRelay(t *testing.T) {
	var sinces []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/runs/r1/container-log" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		sinces = append(sinces, r.URL.Query().Get("since"))
		if len(sinces) == 1 {
			w.Write([]byte("2026-11-24T06:00:00.100000000Z selfserve: loaded\n2026-11-24T06:00:01.5Z a line with  spaces\nnot stamped\n"))
		}
	}))
	defer srv.Close()
	var out bytes.Buffer
	r := &logRelay{c: api.NewClient(srv.URL, "tok"), runID: "r1", out: &out}
	for range 2 {
		if _, err := r.once(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := out.String(), "selfserve: loaded\na line with  spaces\n"; got != want {
		t.Errorf("relayed %q, want %q", got, want)
	}
	if len(sinces) != 2 || sinces[0] != "" || sinces[1] != "2026-11-24T06:00:01.5Z" {
		t.Errorf("since asked: %q", sinces)
	}
}
