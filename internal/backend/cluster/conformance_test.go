package cluster_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// The cluster backend passes the conformance suite against real agents: `hangar agent`
// processes of the built binary join a Dispatcher served by the suite's workspace, get their
// work by long poll and start real supervisors. With two nodes, each node's supervisor runs its
// part and the logs and outputs of both come back.
func TestConformance(t *testing.T) {
	for _, nodes := range []int{1, 2} {
		t.Run(fmt.Sprintf("Nodes%d", nodes), func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, ws *backendtest.Workspace) *backendtest.Engine {
				c := startCluster(t, ws, nodes)
				return &backendtest.Engine{
					Target: c.target,
					Nodes:  nodes,
					// A fresh instance shares only what a restarted server would find again:
					// the store, and the dispatcher that serves the agents' routes.
					New:     func() backend.Backend { return &cluster.Backend{Store: c.store, Agents: c.agents} },
					Prepare: c.place,
				}
			})
		})
	}
}

// suiteCluster is a cluster of real agents on this machine for one test of the suite.
type suiteCluster struct {
	target compute.Target
	store  *store.Store
	agents *cluster.Dispatcher
	nodes  []string
	ws     *backendtest.Workspace

	mu     sync.Mutex
	tokens map[string]string // run id → run token, sent with assignments
}

// startCluster stores a cluster target, serves the agents' routes from the workspace and starts
// one agent per node, waiting until all have joined.
func startCluster(t *testing.T, ws *backendtest.Workspace, nodes int) *suiteCluster {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &suiteCluster{store: st, ws: ws, tokens: map[string]string{}}
	c.target = backendtest.Target(t, compute.Spec{Name: "suite-pool", Type: compute.TypeCluster,
		Cluster: &compute.ClusterSpec{Size: "local-quarter", MaxInstances: nodes}})
	if err := st.Cluster.PutCompute(t.Context(), c.target); err != nil {
		t.Fatal(err)
	}
	c.agents = &cluster.Dispatcher{Store: st, Key: []byte("suite-key-" + t.Name()), Log: slog.New(slog.DiscardHandler),
		Runs: tokenRuns(c.token)}
	serveAgents(ws, c.agents)
	exe := backendtest.Binary(t)
	for range nodes {
		n, tok, err := c.agents.CreateNode(t.Context(), cluster.NewNode{Pool: c.target.Name, Reason: "suite"})
		if err != nil {
			t.Fatal(err)
		}
		startAgent(t, exe, ws.URL, n.ID, tok)
		c.nodes = append(c.nodes, n.ID)
	}
	waitJoined(t, st, c.nodes)
	return c
}

// place is the suite's Prepare: the run goes to the cluster's nodes in order (what Place would
// decide on an idle cluster), and the workspace learns each node's rank.
func (c *suiteCluster) place(_ *testing.T, l *backend.Launch) {
	c.mu.Lock()
	c.tokens[l.RunID] = l.Token
	c.mu.Unlock()
	l.Attempt = 1
	l.Spec.Resources.InstanceCount = len(c.nodes)
	l.Placement = &job.Placement{Nodes: c.nodes}
	ranks := map[string]int{}
	for i, n := range c.nodes {
		ranks[n] = i
	}
	c.ws.AddRun(l.RunID, l.Token, l.Spec, len(c.nodes), ranks)
}

func (c *suiteCluster) token(runID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tokens[runID]
}

// startAgent starts `hangar agent` for a node; it is stopped (SIGTERM, then SIGKILL) at the
// test's end, leaving its supervisors to the suite's cleanup.
func startAgent(t *testing.T, exe, server, nodeID, joinToken string) {
	t.Helper()
	dir := t.TempDir()
	logFile, err := os.Create(filepath.Join(t.TempDir(), "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "agent", "--server", server, "--join-token", joinToken, "--node-id", nodeID,
		"--work-dir", dir, "--cores", "1", "--memory", "1Gi", "--gpus", "none", "--heartbeat", "2s")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("agent %s log:\n%s", nodeID, b)
			}
		}
	})
}

// waitJoined waits until every node's agent has joined (the node is idle).
func waitJoined(t *testing.T, st *store.Store, nodes []string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, id := range nodes {
		for {
			n, err := st.Cluster.Node(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if n.State == compute.NodeIdle {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s did not join: %s (%s)", id, n.State, n.StateReason)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// serveAgents serves the two routes agents call, as the server does, from the workspace.
func serveAgents(ws *backendtest.Workspace, d *cluster.Dispatcher) {
	ws.Handle("POST /api/agents/join", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req api.JoinRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			answer(w, nil, fmt.Errorf("%w: %v", cluster.ErrInvalid, err))
			return
		}
		rep, err := d.Join(r.Context(), bearer(r), req)
		answer(w, rep, err)
	}))
	ws.Handle("POST /api/agents/{id}/heartbeat", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := d.Authenticate(bearer(r), id); err != nil {
			answer(w, nil, err)
			return
		}
		var hb api.AgentHeartbeat
		if err := json.NewDecoder(r.Body).Decode(&hb); err != nil {
			answer(w, nil, fmt.Errorf("%w: %v", cluster.ErrInvalid, err))
			return
		}
		rep, err := d.Heartbeat(r.Context(), id, hb)
		answer(w, rep, err)
	}))
}

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// answer writes a reply, or the error with the status code the server maps it to.
func answer(w http.ResponseWriter, v any, err error) {
	code := http.StatusOK
	switch {
	case errors.Is(err, cluster.ErrUnauthorized):
		code = http.StatusUnauthorized
	case errors.Is(err, cluster.ErrGone):
		code = http.StatusGone
	case errors.Is(err, cluster.ErrInvalid):
		code = http.StatusBadRequest
	case err != nil:
		code = http.StatusInternalServerError
	}
	if err != nil {
		v = api.ErrorBody{Error: err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// tokenRuns is the run core for the suite: its tokens, and no kicks.
type tokenRuns func(runID string) string

func (f tokenRuns) RunToken(runID string) string { return f(runID) }
func (tokenRuns) Kick()                          {}
