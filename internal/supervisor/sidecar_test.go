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
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// sidecarFixture is entryFixture for a supervisor sidecar (a gate file in its config).
func sidecarFixture(t *testing.T) (PodEntry, string, string) {
	t.Helper()
	e, runDir := entryFixture(t, "")
	gate := filepath.Join(runDir, "serve-gate")
	cfg, _ := json.Marshal(api.SupervisorConfig{RunID: "r1", Token: "t", Dir: runDir, ServeGate: gate})
	if err := os.Chmod(e.Config, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.Config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return e, runDir, gate
}

// A sidecar whose run ended before the image started closes the gate with the reason (the gate
// container then fails the pod), and does not exit until Kubernetes stops it: a sidecar that
// exits is started again.
func TestPodEntrySidecarClosesTheGate(t *testing.T) {
	t.Setenv("SUPERVISE", "die")
	e, _, gate := sidecarFixture(t)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan int)
	go func() { done <- e.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	var text []byte
	for {
		var err error
		if text, err = os.ReadFile(gate); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	if code := <-done; code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	var out bytes.Buffer
	if code := AwaitGate(t.Context(), gate, &out); code != 1 || !strings.Contains(out.String(), "the supervisor did not start the image: the run ended before") {
		t.Errorf("the gate container: exit %d, %q", code, out.String())
	}
}

// A sidecar started again after its run ended reports that run's end; it supervises nothing.
func TestPodEntrySidecarRestarted(t *testing.T) {
	t.Setenv("SUPERVISE", "result")
	e, runDir, gate := sidecarFixture(t)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ended := `{"state":"Failed","reason":"the image's container ended","time":"2026-11-24T06:00:00Z"}`
	if err := os.WriteFile(filepath.Join(runDir, ResultFile), []byte(ended), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteGate(gate, GateReady); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	stop() // Kubernetes stops it at once
	if code := e.Run(ctx); code != 1 {
		t.Errorf("exit %d", code)
	}
	if r := terminationResult(t, e); r.Reason != "the image's container ended" {
		t.Errorf("termination message %+v", r)
	}
	if _, err := os.Stat(filepath.Join(runDir, "seen-config.json")); err == nil {
		t.Error("the supervisor ran again")
	}
	if code := AwaitGate(t.Context(), gate, &bytes.Buffer{}); code != 0 {
		t.Errorf("an open gate: exit %d", code)
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
