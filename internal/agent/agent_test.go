package agent_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/agent"
	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// fakeSupervisor stands in for `hangar supervise --config <run dir>/supervisor.json`: it ends
// Completed when <run dir>/finish appears, Canceled on SIGTERM.
// It writes <run dir>/ready once it takes SIGTERM, for tests that cancel; as `hangar reap` (the
// stand-in for a supervisor gone without a result) it writes a Failed result and exits.
const fakeSupervisor = `#!/bin/sh
if [ "$1" = reap ]; then
  echo '{"state":"Failed","reason":"reaped","time":"2024-01-01T00:00:00Z"}' > "$5/result.json"
  exit 0
fi
dir=$(dirname "$3")
trap 'echo "{\"state\":\"Canceled\",\"time\":\"2024-01-01T00:00:00Z\"}" > "$dir/result.json"; exit 0' TERM
echo ready > "$dir/ready"
while [ ! -f "$dir/finish" ] && [ -d "$dir" ]; do sleep 0.02; done
echo '{"state":"Completed","exit_code":0,"time":"2024-01-01T00:00:00Z"}' > "$dir/result.json"
`

// server is the agents' side of a workspace server, over a real store, that can go down.
type server struct {
	d    *cluster.Dispatcher
	url  string
	down atomic.Bool
}

func newServer(t *testing.T) *server {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := &server{d: &cluster.Dispatcher{Store: st, Key: []byte("k"), Runs: tokRuns{},
		Log: slog.New(slog.DiscardHandler)}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/agents/join", func(w http.ResponseWriter, r *http.Request) {
		var req api.JoinRequest
		decode(r, &req)
		rep, err := s.d.Join(r.Context(), bearer(r), req)
		answer(w, rep, err)
	})
	mux.HandleFunc("POST /api/agents/{id}/heartbeat", func(w http.ResponseWriter, r *http.Request) {
		if err := s.d.Authenticate(bearer(r), r.PathValue("id")); err != nil {
			answer(w, nil, err)
			return
		}
		var hb api.AgentHeartbeat
		decode(r, &hb)
		rep, err := s.d.Heartbeat(r.Context(), r.PathValue("id"), hb)
		answer(w, rep, err)
	})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

type agentRun struct {
	a    *agent.Agent
	dir  string
	errc chan error
	stop context.CancelFunc
}

func start(t *testing.T, s *server, cfg agent.Config) *agentRun {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "hangar")
	if err := os.WriteFile(exe, []byte(fakeSupervisor), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.ServerURL, cfg.Exe = s.url, exe
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 20 * time.Millisecond
	}
	cfg.Machine = &compute.NodeInfo{Hostname: "box", Cores: 4, MemoryBytes: 8 * resources.Gi}
	if cfg.WorkDir == "" {
		cfg.WorkDir = t.TempDir()
	}
	a, err := agent.New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &agentRun{a: a, dir: cfg.WorkDir, errc: make(chan error, 1), stop: cancel}
	go func() { r.errc <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.errc
		files, _ := filepath.Glob(filepath.Join(cfg.WorkDir, "runs", "*"))
		for _, f := range files {
			os.WriteFile(filepath.Join(f, "finish"), nil, 0o644)
		}
	})
	return r
}

func (r *agentRun) finish(t *testing.T, runID string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, "runs", runID, "finish"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (r *agentRun) exited(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.errc:
		r.errc <- err // for the cleanup
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the agent did not exit")
		return nil
	}
}

func waitNode(t *testing.T, s *server, id, what string, cond func(n *store.Node) bool) *store.Node {
	t.Helper()
	var n *store.Node
	var err error
	if !testwait.Until(time.Now().Add(20*time.Second), func() bool {
		n, err = s.d.Store.Cluster.Node(t.Context(), id)
		return err == nil && cond(n)
	}) {
		t.Fatalf("timed out waiting for node %s %s: %+v, %v", id, what, n, err)
	}
	return n
}

func nodeRun(n *store.Node, id string) *store.NodeRun {
	for i := range n.Runs {
		if n.Runs[i].RunID == id {
			return &n.Runs[i]
		}
	}
	return nil
}

func newNode(t *testing.T, s *server) (string, string) {
	t.Helper()
	n, tok, err := s.d.CreateNode(t.Context(), cluster.NewNode{Pool: "p"})
	if err != nil {
		t.Fatal(err)
	}
	return n.ID, tok
}

func TestAgentLifecycle(t *testing.T) {
	s := newServer(t)
	id, tok := newNode(t, s)
	r := start(t, s, agent.Config{JoinToken: tok, Slice: agent.Slice{MilliCPU: 1500}})
	n := waitNode(t, s, id, "to join", func(n *store.Node) bool { return n.State == compute.NodeIdle })
	if want := (resources.Vector{MilliCPU: 1500, Memory: 8 * resources.Gi}); n.Capacity != want {
		t.Errorf("capacity %s, want %s", n.Capacity, want)
	}
	if err := s.d.Assign(t.Context(), id, "r1"); err != nil {
		t.Fatal(err)
	}
	n = waitNode(t, s, id, "to run r1", func(n *store.Node) bool { r := nodeRun(n, "r1"); return r != nil && r.Alive })
	if n.State != compute.NodeRunning || nodeRun(n, "r1").PID <= 0 {
		t.Errorf("node %+v", n)
	}
	cfg, err := os.ReadFile(filepath.Join(r.dir, "runs", "r1", "supervisor.json"))
	if err != nil || !strings.Contains(string(cfg), `"token": "tok-r1"`) || !strings.Contains(string(cfg), s.url) {
		t.Errorf("supervisor.json %s, %v", cfg, err)
	}
	pending, _ := s.d.Store.Cluster.Assignments(t.Context(), id, true)
	if len(pending) != 0 {
		t.Errorf("unacknowledged work %+v", pending)
	}

	// The server goes away: the run goes on, and ends while it is away.
	s.down.Store(true)
	r.finish(t, "r1")
	waitFile(t, filepath.Join(r.dir, "runs", "r1", "result.json"))
	s.down.Store(false)
	n = waitNode(t, s, id, "to report r1 ended", func(n *store.Node) bool {
		r := nodeRun(n, "r1")
		return r != nil && !r.Alive && r.Final != nil && r.Final.State == "Completed"
	})
	if n.State != compute.NodeIdle {
		t.Errorf("state %s after r1 ended", n.State)
	}

	// A cancel of a run that ended is acknowledged and changes nothing.
	if _, err := s.d.Store.Cluster.EnqueueAssignment(t.Context(), store.Assignment{NodeID: id, RunID: "r1", Kind: store.CancelRun}); err != nil {
		t.Fatal(err)
	}
	waitNode(t, s, id, "to acknowledge the cancel", func(*store.Node) bool {
		p, _ := s.d.Store.Cluster.Assignments(t.Context(), id, true)
		return len(p) == 0
	})

	if err := s.d.Release(t.Context(), id, "idle"); err != nil {
		t.Fatal(err)
	}
	if err := r.exited(t); err != nil {
		t.Errorf("Run = %v", err)
	}
}

func TestAgentCancelAndGone(t *testing.T) {
	s := newServer(t)
	id, tok := newNode(t, s)
	r := start(t, s, agent.Config{JoinToken: tok})
	waitNode(t, s, id, "to join", func(n *store.Node) bool { return n.State == compute.NodeIdle })
	if err := s.d.Assign(t.Context(), id, "r1"); err != nil {
		t.Fatal(err)
	}
	waitNode(t, s, id, "to run r1", func(n *store.Node) bool { r := nodeRun(n, "r1"); return r != nil && r.Alive })
	// A SIGTERM before the supervisor handles it would end it without a result.
	waitFile(t, filepath.Join(r.dir, "runs", "r1", "ready"))
	if err := s.d.Cancel(t.Context(), id, "r1"); err != nil {
		t.Fatal(err)
	}
	waitNode(t, s, id, "to report r1 canceled", func(n *store.Node) bool {
		r := nodeRun(n, "r1")
		return r != nil && r.Final != nil && r.Final.State == "Canceled"
	})
	// The node is deleted under the agent: it exits (it is idle).
	if err := s.d.Delete(t.Context(), id, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := r.exited(t); err != nil {
		t.Errorf("Run = %v", err)
	}
}

// A restarted agent finds its identity and its runs, and needs no join token.
func TestAgentRestartAdoptsRuns(t *testing.T) {
	s := newServer(t)
	id, tok := newNode(t, s)
	work := t.TempDir()
	first := start(t, s, agent.Config{JoinToken: tok, WorkDir: work})
	waitNode(t, s, id, "to join", func(n *store.Node) bool { return n.State == compute.NodeIdle })
	if err := s.d.Assign(t.Context(), id, "r1"); err != nil {
		t.Fatal(err)
	}
	waitNode(t, s, id, "to run r1", func(n *store.Node) bool { r := nodeRun(n, "r1"); return r != nil && r.Alive })
	first.stop() // SIGTERM without --kill-runs-on-exit: the run goes on
	if err := first.exited(t); err != nil {
		t.Fatal(err)
	}
	n := waitNode(t, s, id, "to be unusable", func(n *store.Node) bool { return n.State == compute.NodeUnusable })
	if r := nodeRun(n, "r1"); r == nil || !r.Alive {
		t.Fatalf("the stopped agent's run: %+v", r)
	}
	second := start(t, s, agent.Config{WorkDir: work})
	waitNode(t, s, id, "to be back with r1", func(n *store.Node) bool {
		r := nodeRun(n, "r1")
		return n.State == compute.NodeRunning && r != nil && r.Alive
	})
	second.finish(t, "r1")
	waitNode(t, s, id, "to report r1 done", func(n *store.Node) bool { return n.State == compute.NodeIdle })

	// With --kill-runs-on-exit, stopping cancels the runs.
	if err := s.d.Assign(t.Context(), id, "r2"); err != nil {
		t.Fatal(err)
	}
	waitNode(t, s, id, "to run r2", func(n *store.Node) bool { r := nodeRun(n, "r2"); return r != nil && r.Alive })
	// The fake supervisor has set its TERM trap once it wrote ready: a SIGTERM before that ends
	// the shell with no result, and the agent reaps the run (Failed, "reaped"), as it should.
	waitFile(t, filepath.Join(work, "runs", "r2", "ready"))
	second.stop()
	second.exited(t)
	thirdStarted := time.Now()
	third := start(t, s, agent.Config{WorkDir: work, KillRunsOnExit: true, ExitGrace: 10 * time.Second})
	// The node's state and run list are the second agent's until the third reports: wait for a
	// heartbeat of the third that has adopted r2, or it could be stopped before it knows r2.
	waitNode(t, s, id, "to be back with r2", func(n *store.Node) bool {
		r := nodeRun(n, "r2")
		return n.LastHeartbeat.After(thirdStarted) && n.State == compute.NodeRunning && r != nil && r.Alive
	})
	third.stop()
	third.exited(t)
	if b := waitFile(t, filepath.Join(work, "runs", "r2", "result.json")); !strings.Contains(b, "Canceled") {
		t.Errorf("r2 result %s", b)
	}
}

// Work reaches an agent as it is queued, and a run's end reaches the server as it happens, even
// with a heartbeat interval far longer than the test waits: the heartbeat is a long poll the
// server answers when there is work, and the agent cuts it short when a run of its ends.
func TestAgentHearsWorkAsItIsQueued(t *testing.T) {
	s := newServer(t)
	id, tok := newNode(t, s)
	r := start(t, s, agent.Config{JoinToken: tok, Heartbeat: 5 * time.Minute})
	waitNode(t, s, id, "to join", func(n *store.Node) bool { return n.State == compute.NodeIdle })
	for _, run := range []string{"r1", "r2"} { // the second while the agent waits on the server
		if err := s.d.Assign(t.Context(), id, run); err != nil {
			t.Fatal(err)
		}
		waitNode(t, s, id, "to run "+run, func(n *store.Node) bool { r := nodeRun(n, run); return r != nil && r.Alive })
	}
	r.finish(t, "r1")
	waitNode(t, s, id, "to report r1 ended", func(n *store.Node) bool { r := nodeRun(n, "r1"); return r != nil && !r.Alive })
}

func TestAgentRefusedJoin(t *testing.T) {
	s := newServer(t)
	_, tok := newNode(t, s)
	exe := filepath.Join(t.TempDir(), "hangar")
	os.WriteFile(exe, []byte(fakeSupervisor), 0o755)
	a, err := agent.New(t.Context(), agent.Config{ServerURL: s.url, JoinToken: tok, NodeID: "p-other", WorkDir: t.TempDir(),
		Exe: exe, Machine: &compute.NodeInfo{Cores: 1, MemoryBytes: resources.Gi}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	err = a.Run(t.Context())
	var e *api.Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
		t.Errorf("Run with another node's token = %v, want 401", err)
	}
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	testwait.Within(t, 20*time.Second, path, func() bool { b, _ = os.ReadFile(path); return len(b) > 0 })
	return string(b)
}

// tokRuns is the dispatcher's run core here: tokens "tok-<run>", no kicks (no controller).
type tokRuns struct{}

func (tokRuns) RunToken(id string) string { return "tok-" + id }
func (tokRuns) Kick()                     {}
