package supervisor

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// A Deployment pod's claim: nothing to claim (409) and an unreachable moment are waited out, the
// claim token and pod name are what is sent, a refusal (401) ends the claim at once with the
// server's words, and a stopped pod stops asking.
func TestClaimRun(t *testing.T) {
	old := claimBackoff
	claimBackoff = [2]time.Duration{time.Millisecond, 5 * time.Millisecond}
	t.Cleanup(func() { claimBackoff = old })
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req api.ReplicaClaimRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		switch {
		case r.URL.Path != "/api/replica-claims" || r.Header.Get("Authorization") != "Bearer tok":
			http.Error(w, `{"error": "a replica claim needs its Deployment's claim token"}`, http.StatusUnauthorized)
		case req.Pod != "web-1":
			http.Error(w, `{"error": "not a pod of this Deployment"}`, http.StatusUnauthorized)
		case calls.Add(1) < 3:
			http.Error(w, `{"error": "no replica run to claim"}`, http.StatusConflict)
		default:
			_ = json.NewEncoder(w).Encode(api.ReplicaClaim{RunID: "r1", Config: api.SupervisorConfig{RunID: "r1", Token: "r1.tok", Dir: "/hangar/runs/r1"}})
		}
	}))
	defer srv.Close()
	log := slog.New(slog.DiscardHandler)
	cfg, err := claimRun(t.Context(), ClaimConfig{ServerURL: srv.URL, Token: "tok"}, "web-1", nil, log)
	if err != nil || cfg.RunID != "r1" || cfg.Token != "r1.tok" || calls.Load() != 3 {
		t.Fatalf("claim after two 409s: %+v, %v (%d calls)", cfg, err, calls.Load())
	}
	if _, err := claimRun(t.Context(), ClaimConfig{ServerURL: srv.URL, Token: "other"}, "web-1", nil, log); !errors.Is(err, errDenied) {
		t.Errorf("a refused token: %v; want refused at once", err)
	}
	stopped := make(chan struct{})
	close(stopped)
	calls.Store(-1000)
	if _, err := claimRun(t.Context(), ClaimConfig{ServerURL: srv.URL, Token: "tok"}, "web-1", stopped, log); err == nil {
		t.Errorf("a stopped pod's claim went on")
	}
}

// readClaim tells a claim file from a run's config.
func TestReadClaim(t *testing.T) {
	dir := t.TempDir()
	claim := filepath.Join(dir, "claim.json")
	run := filepath.Join(dir, "run.json")
	_ = os.WriteFile(claim, []byte(`{"claim": {"server_url": "http://s", "token": "t"}}`), 0o600)
	_ = os.WriteFile(run, []byte(`{"run_id": "r", "token": "x", "dir": "/d"}`), 0o600)
	if c, ok := readClaim(claim); !ok || c.ServerURL != "http://s" || c.Token != "t" {
		t.Errorf("claim file: %+v %v", c, ok)
	}
	if _, ok := readClaim(run); ok {
		t.Errorf("a run's config read as a claim file")
	}
}
