package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	clusterbackend "github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/provider/command"
	"github.com/hangar-ml/hangar/internal/provider/local"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/testwait"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// cluster plays the controller's part for a cluster target of a workspace: it opens the
// workspace's store beside the server and creates nodes, runs and assignments there directly.
type cluster struct {
	t    testing.TB
	w    *ws
	pool string
	st   *store.Store
	d    *clusterbackend.Dispatcher
}

func newCluster(t testing.TB, w *ws, pool string) *cluster {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, w.dsn())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v, ok, err := st.Setting(ctx, "run_token_key")
	if err != nil || !ok {
		t.Fatalf("run token key: %v (set %v)", err, ok)
	}
	key, err := hex.DecodeString(v)
	if err != nil {
		t.Fatal(err)
	}
	// A real cluster target, so that the controller keeps the nodes this test makes by hand:
	// no demand, a long idle time, room for them under max_instances.
	props, err := json.Marshal(compute.Stored{Spec: compute.Spec{Name: pool, Type: compute.TypeCluster,
		Cluster: &compute.ClusterSpec{Size: "local-quarter", Tier: compute.TierDedicated, MaxInstances: 10,
			IdleTimeBeforeScaleDown: 3600, Provider: compute.Provider{Type: compute.ProviderLocal}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Cluster.PutCompute(ctx, compute.Target{Name: pool, Type: compute.TypeCluster, Properties: props, CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	d := &clusterbackend.Dispatcher{Store: st, Key: key, Runs: mintingRuns{key: key}, Log: slog.New(slog.DiscardHandler)}
	return &cluster{t: t, w: w, pool: pool, st: st, d: d}
}

// newNode records a provisioning node and returns it with its join token.
func (c *cluster) newNode(size sizes.Size) (*store.Node, string) {
	c.t.Helper()
	n, tok, err := c.d.CreateNode(context.Background(), clusterbackend.NewNode{Pool: c.pool, Size: size, JoinTimeout: 5 * time.Minute, Reason: "test"})
	if err != nil {
		c.t.Fatal(err)
	}
	return n, tok
}

// queueRun creates a queued run on the cluster, already handed to a node (so the controller
// leaves it alone), and assigns it to that node.
func (c *cluster) queueRun(nodeID, id, cmd string) {
	c.t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	r := &job.Run{ID: id, DisplayName: id, ExperimentName: "Default", Compute: c.pool, Status: job.Queued,
		StatusReason: "assigned to node " + nodeID, CreatedAt: now, LastHeartbeat: now,
		Spec:   job.Spec{Type: "command", Name: id, Command: cmd, Compute: c.pool, ExperimentName: "Default"},
		Handle: json.RawMessage(`{"run":"` + id + `","pool":"` + c.pool + `","nodes":["` + nodeID + `"]}`)}
	events := []job.Event{{Time: now, To: job.NotStarted, Reason: "created"}, {Time: now, From: job.NotStarted, To: job.Queued, Reason: r.StatusReason}}
	if err := c.st.RunWrites.CreateRun(ctx, r, events...); err != nil {
		c.t.Fatal(err)
	}
	if err := c.st.Cluster.SetPlacement(ctx, id, 1, job.Placement{Nodes: []string{nodeID}}, now); err != nil {
		c.t.Fatal(err)
	}
	if err := c.d.Assign(ctx, nodeID, id); err != nil {
		c.t.Fatal(err)
	}
}

// waitNode polls the API until the node satisfies cond.
func (c *cluster) waitNode(id, what string, cond func(n *api.Node) bool) *api.Node {
	c.t.Helper()
	var n *api.Node
	testwait.Within(c.t, 60*time.Second, "node "+id+" "+what, func() bool {
		var err error
		n, err = c.w.client().Nodes.Get(context.Background(), id)
		return err == nil && cond(n)
	})
	return n
}

func runOf(n *api.Node, id string) *api.AgentRun {
	for i := range n.Runs {
		if n.Runs[i].RunID == id {
			return &n.Runs[i]
		}
	}
	return nil
}

// agentProc is a `hangar agent` process.
type agentProc struct {
	cmd  *exec.Cmd
	dir  string
	log  string
	done chan struct{}
}

// startAgent starts `hangar agent` with a join token; cleanup stops it and its supervisors.
func startAgent(t testing.TB, w *ws, token string, args ...string) *agentProc {
	t.Helper()
	dir := t.TempDir()
	a := &agentProc{dir: filepath.Join(dir, "work"), log: filepath.Join(dir, "agent.log"), done: make(chan struct{})}
	logf, err := os.Create(a.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	base := []string{"agent", "--server", w.client().BaseURL(), "--work-dir", a.dir, "--heartbeat", "300ms"}
	a.cmd = exec.Command(hangarBin, append(base, args...)...)
	a.cmd.Env = append(w.env(), "HANGAR_JOIN_TOKEN="+token)
	a.cmd.Stdout, a.cmd.Stderr = logf, logf
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.done:
		case <-time.After(10 * time.Second):
			_ = a.cmd.Process.Kill()
		}
		killRuns(filepath.Join(a.dir, "runs"))
		if t.Failed() || os.Getenv("AGENT_LOG") != "" {
			t.Logf("agent log:\n%s", readFile(t, a.log))
		}
	})
	return a
}

// killRuns kills the supervisors (and their process groups' sessions) an agent left behind.
func killRuns(runsDir string) {
	files, _ := filepath.Glob(filepath.Join(runsDir, "*", "handle.json"))
	for _, f := range files {
		var h struct {
			PID int `json:"pid"`
		}
		// Only this run's supervisor (pids are reused fast on a busy machine); it leads its session.
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &h) == nil && h.PID > 0 && ownsPID(h.PID, filepath.Dir(f)) {
			_ = syscall.Kill(-h.PID, syscall.SIGKILL)
		}
	}
}

func (a *agentProc) logHas(s string) bool {
	b, _ := os.ReadFile(a.log)
	return strings.Contains(string(b), s)
}

// The agent protocol end to end against the real server: join with resources, an assigned run
// executed by a real supervisor, the server killed mid-run and restarted (the agent keeps the
// run going, work queued meanwhile is delivered, the agent re-registers), a cancel, a release.
func TestAgentRunsAssignedWorkAndOutlivesServer(t *testing.T) {
	w := newWS(t)
	c := newCluster(t, w, "pool")
	n, tok := c.newNode(sizes.Size{Name: "local-quarter", Cores: 2, MemoryBytes: 2 * resources.Gi})
	a := startAgent(t, w, tok, "--node-id", n.ID, "--cores", "2", "--memory", "2Gi", "--gpus", "none", "--label", "disk=ssd")

	joined := c.waitNode(n.ID, "to join", func(n *api.Node) bool { return n.State == "idle" })
	if want := (resources.Vector{MilliCPU: 2000, Memory: 2 * resources.Gi}); joined.Capacity != want ||
		joined.Labels["disk"] != "ssd" || joined.Info == nil || joined.Info.Cores < 1 || joined.JoinedAt == nil {
		t.Fatalf("joined node %+v", joined)
	}
	// The server has the node before the agent has written its identity.
	testwait.Within(t, 10*time.Second, "the agent to save its identity", func() bool { return a.logHas("agent ready") })
	if b := readFile(t, filepath.Join(a.dir, "agent.json")); !strings.Contains(b, n.ID) {
		t.Errorf("agent identity %s", b)
	}
	checkAgentAuth(t, w, n.ID)

	gate := filepath.Join(runsSee(t), "gate")
	c.queueRun(n.ID, "r1", `echo "started on $(hostname)"; while [ ! -f `+gate+` ]; do sleep 0.1; done; echo finished`)
	w.waitStatus("r1", 60*time.Second, job.Running)
	testwait.Within(t, 30*time.Second, "r1 to log", func() bool { return logHas(w, "r1", "started on") })
	busy := c.waitNode(n.ID, "to run r1", func(n *api.Node) bool { r := runOf(n, "r1"); return r != nil && r.Alive })
	if busy.State != "running" || runOf(busy, "r1").PID <= 0 || len(busy.Pending) != 0 {
		t.Errorf("busy node %+v", busy)
	}
	if fi, err := os.Stat(filepath.Join(a.dir, "runs", "r1", "supervisor.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("supervisor.json: %v, %v", fi, err)
	}

	w.killServer()
	testwait.Within(t, 30*time.Second, "the agent to notice", func() bool { return a.logHas("server unreachable") })
	c.queueRun(n.ID, "r2", "echo second") // queued while the server is away
	w.startServer()
	testwait.Within(t, 30*time.Second, "the agent to re-register", func() bool { return a.logHas("server is back; re-registered") })
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r1", "r2"} {
		if d := w.waitStatus(id, 60*time.Second, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed {
			t.Fatalf("%s ended %s: %s", id, d.Status, d.StatusReason)
		}
	}
	if l := w.logs("r1"); !strings.Contains(l, "started on") || !strings.Contains(l, "finished") {
		t.Errorf("r1 logs:\n%s", l)
	}
	if l := w.logs("r2"); !strings.Contains(l, "second") {
		t.Errorf("r2 logs:\n%s", l)
	}
	c.waitNode(n.ID, "to report r1 done", func(n *api.Node) bool {
		r := runOf(n, "r1")
		return n.State == "idle" && r != nil && !r.Alive && r.Final != nil && r.Final.State == job.Completed
	})

	cancelAndRelease(t, w, c, a, n.ID)
}

// cancelAndRelease: a cancel reaches the run's supervisor, which still reports Canceled; then
// the released agent, idle, says goodbye and exits.
func cancelAndRelease(t *testing.T, w *ws, c *cluster, a *agentProc, nodeID string) {
	t.Helper()
	c.queueRun(nodeID, "r3", "echo waiting; sleep 300")
	testwait.Within(t, 60*time.Second, "r3 to log", func() bool { return logHas(w, "r3", "waiting") })
	if err := c.d.Cancel(context.Background(), nodeID, "r3"); err != nil {
		t.Fatal(err)
	}
	if d := w.waitStatus("r3", 60*time.Second, job.Completed, job.Failed, job.Canceled); d.Status != job.Canceled {
		t.Errorf("r3 ended %s: %s", d.Status, d.StatusReason)
	}

	if err := c.d.Release(context.Background(), nodeID, "idle for 0s"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the released agent did not exit")
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("released agent exit code %d", code)
	}
	evs, err := w.client().Nodes.Events(context.Background(), "pool", 0)
	if err != nil {
		t.Fatal(err)
	}
	var tl []string
	for _, e := range evs {
		tl = append(tl, e.From+">"+e.To)
	}
	// The node may be deleted already: a released node whose runs have all ended is deleted by
	// the next placement pass, and the agent's last heartbeat starts one.
	got := strings.TrimSuffix(strings.Join(tl, " "), " releasing>deleted")
	if got != ">provisioning provisioning>idle running>releasing" && got != ">provisioning provisioning>idle idle>releasing" {
		t.Errorf("timeline %q", strings.Join(tl, " "))
	}
}

// checkAgentAuth: agent routes take the node's agent token only.
func checkAgentAuth(t *testing.T, w *ws, nodeID string) {
	t.Helper()
	admin := w.client()
	for name, c := range map[string]*api.Client{
		"admin token": admin,
		"run token":   api.NewClient(admin.BaseURL(), "r1.0123456789abcdef"),
		"no token":    api.NewClient(admin.BaseURL(), ""),
	} {
		_, err := c.Agents.Heartbeat(context.Background(), nodeID, api.AgentHeartbeat{})
		var e *api.Error
		if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
			t.Errorf("heartbeat with the %s = %v, want 401", name, err)
		}
	}
	if _, err := admin.Agents.Join(context.Background(), api.JoinRequest{}); err == nil {
		t.Error("join with the admin token succeeded")
	}
}

// The local provider starts real agents, each with its slice, which join; a released node's
// agent exits by itself, a deleted one is stopped.
func TestLocalProviderAgentsJoin(t *testing.T) {
	w := newWS(t)
	c := newCluster(t, w, "loc")
	p := &local.Provider{Exe: hangarBin, Root: t.TempDir(), AgentArgs: []string{"--heartbeat", "300ms"},
		StopGrace: 5 * time.Second, Log: slog.New(slog.DiscardHandler)}
	size := sizes.Size{Name: "tiny", Cores: 1, MemoryBytes: resources.Gi, Family: "local"}
	var nodes []*store.Node
	for range 2 {
		n, tok := c.newNode(size)
		id, err := p.Create(context.Background(), provider.CreateRequest{Pool: "loc", NodeID: n.ID, Size: size,
			JoinURL: w.client().BaseURL(), JoinToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.d.SetProviderID(context.Background(), n.ID, id); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = p.Delete(context.Background(), provider.DeleteRequest{NodeID: n.ID, ProviderID: id})
			killRuns(filepath.Join(id, "runs"))
		})
		n.ProviderID = id
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		got := c.waitNode(n.ID, "to join", func(n *api.Node) bool { return n.State == "idle" })
		if got.Capacity != size.Vector() || got.ProviderID != n.ProviderID {
			t.Errorf("node %s: capacity %s, provider id %q", n.ID, got.Capacity, got.ProviderID)
		}
	}
	c.queueRun(nodes[0].ID, "lr1", "echo on a local node")
	if d := w.waitStatus("lr1", 60*time.Second, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("lr1 ended %s: %s", d.Status, d.StatusReason)
	}

	// Released: the agent exits by itself; Delete then finds it gone.
	if err := c.d.Release(context.Background(), nodes[0].ID, "scale down"); err != nil {
		t.Fatal(err)
	}
	testwait.Within(t, 30*time.Second, "the released agent to exit", func() bool { return !agentAlive(t, nodes[0].ProviderID) })
	// Deleted while running: the agent is stopped and says so.
	for _, n := range nodes {
		if err := p.Delete(context.Background(), provider.DeleteRequest{Pool: "loc", NodeID: n.ID, ProviderID: n.ProviderID}); err != nil {
			t.Fatal(err)
		}
	}
	// The node of an agent that stopped is unusable, and the controller deletes it at once: see
	// either, with the reason on the cluster's timeline.
	testwait.Within(t, 60*time.Second, "node "+nodes[1].ID+" to be unusable or gone", func() bool {
		n, err := w.client().Nodes.Get(context.Background(), nodes[1].ID)
		return (err == nil && n.State == "unusable") || api.IsNotFound(err)
	})
	events, err := w.client().Nodes.Events(context.Background(), "loc", 0)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	for _, e := range events {
		stopped = stopped || (e.Node == nodes[1].ID && e.To == "unusable" && strings.Contains(e.Reason, "the agent stopped"))
	}
	if !stopped {
		t.Errorf("the timeline does not say node %s's agent stopped: %+v", nodes[1].ID, events)
	}
	for _, n := range nodes {
		if err := c.d.Delete(context.Background(), n.ID, "deleted"); err != nil {
			t.Fatal(err)
		}
	}
	if ns, err := w.client().Nodes.List(context.Background(), "loc"); err != nil || len(ns) != 0 {
		t.Errorf("nodes left: %+v, %v", ns, err)
	}
}

// agentAlive reads the local provider's record of a node's agent.
func agentAlive(t testing.TB, dir string) bool {
	var rec struct {
		PID int `json:"pid"`
	}
	b, err := os.ReadFile(filepath.Join(dir, local.RecordFile))
	if err != nil {
		return false
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return syscall.Kill(rec.PID, 0) == nil && !zombie(rec.PID)
}

// The command provider runs the example hooks (examples/cluster/local-agent), whose agent joins.
func TestCommandProviderExampleHooks(t *testing.T) {
	w := newWS(t)
	c := newCluster(t, w, "hooks")
	cs, _, err := spec.ParseComputeFile("../../examples/cluster/local-agent/cluster.yml", nil)
	if err != nil {
		t.Fatal(err)
	}
	hooks := cs.Cluster.Provider
	hooks.Env = map[string]string{"HANGAR_EXE": hangarBin, "HANGAR_AGENT_ARGS": "--heartbeat 300ms --exit-grace 5s"}
	p := &command.Provider{Spec: hooks, Log: slog.New(slog.DiscardHandler)}
	size := sizes.Size{Name: "local-quarter", Cores: 1, MemoryBytes: resources.Gi}
	n, tok := c.newNode(size)
	work := t.TempDir()
	req := provider.CreateRequest{Pool: "hooks", NodeID: n.ID, Size: size, JoinURL: w.client().BaseURL(), JoinToken: tok, WorkDir: work}
	id, err := p.Create(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	del := provider.DeleteRequest{Pool: "hooks", NodeID: n.ID, ProviderID: id}
	t.Cleanup(func() {
		_ = p.Delete(context.Background(), del)
		killRuns(filepath.Join(work, "runs"))
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(work, "agent.log"))
			t.Logf("agent log:\n%s", b)
		}
	})
	got := c.waitNode(n.ID, "to join", func(n *api.Node) bool { return n.State == "idle" })
	if got.Capacity != size.Vector() {
		t.Errorf("capacity %s", got.Capacity)
	}
	c.queueRun(n.ID, "cr1", "echo via hooks")
	if d := w.waitStatus("cr1", 60*time.Second, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("cr1 ended %s: %s", d.Status, d.StatusReason)
	}
	if err := p.Delete(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	// The stopped agent's last heartbeat makes the node unusable, and the controller then deletes
	// unusable nodes: either is the end of this node.
	testwait.Within(t, time.Minute, "the node to be unusable or gone once its agent stopped", func() bool {
		got, err := w.client().Nodes.Get(context.Background(), n.ID)
		return api.IsNotFound(err) || (err == nil && got.State == "unusable")
	})
}

// compute list-sizes / add-size / delete-size.
func TestSizesCLI(t *testing.T) {
	w := newWS(t)
	list := func() []sizes.Size {
		var ss []sizes.Size
		if err := json.Unmarshal([]byte(w.ok("compute", "list-sizes", "-o", "json").stdout), &ss); err != nil {
			t.Fatal(err)
		}
		return ss
	}
	has := func(ss []sizes.Size, name string) *sizes.Size {
		for i := range ss {
			if ss[i].Name == name {
				return &ss[i]
			}
		}
		return nil
	}
	ss := list()
	if nc := has(ss, "Standard_NC6s_v3"); nc == nil || nc.GPUs != 1 || nc.GPUModel != "V100" || nc.Family != "NCSv3" {
		t.Errorf("Standard_NC6s_v3 = %+v", nc)
	}
	if lf := has(ss, "local-full"); lf == nil || lf.Cores < 1 {
		t.Errorf("local-full = %+v", lf)
	}
	w.ok("compute", "add-size", "--name", "onprem-a100", "--cores", "32", "--memory", "256Gi", "--gpus", "8",
		"--gpu-model", "A100", "--price", "1.25", "--family", "onprem")
	if z := has(list(), "onprem-a100"); z == nil || z.MemoryBytes != 256*resources.Gi || z.Source != sizes.SourceWorkspace {
		t.Errorf("added size = %+v", z)
	}
	table := w.ok("compute", "list-sizes").stdout
	if !strings.Contains(table, "8 x A100") || !strings.Contains(table, "$1.250") || !strings.Contains(table, "PRICE/HOUR") {
		t.Errorf("table:\n%s", table)
	}
	for _, args := range [][]string{
		{"--name", "ONPREM-A100", "--cores", "1", "--memory", "1Gi", "--family", "x"},      // exists (any case)
		{"--name", "standard_nc6s_v3", "--cores", "1", "--memory", "1Gi", "--family", "x"}, // built-in
		{"--name", "bad", "--cores", "0", "--memory", "1Gi", "--family", "x"},              // invalid
	} {
		if r := w.run(append([]string{"compute", "add-size"}, args...)...); r.code == 0 {
			t.Errorf("add-size %v succeeded", args)
		}
	}
	w.ok("compute", "delete-size", "-n", "onprem-a100", "--yes")
	if has(list(), "onprem-a100") != nil {
		t.Error("deleted size still listed")
	}
}

// mintingRuns is the run core for the dispatcher here: run tokens minted with the workspace's
// key, and no kicks (no controller runs).
type mintingRuns struct{ key []byte }

func (r mintingRuns) RunToken(id string) string {
	return tokens.Run{Key: r.key}.Mint(id, 1, time.Now().Add(time.Hour))
}

func (mintingRuns) Kick() {}
