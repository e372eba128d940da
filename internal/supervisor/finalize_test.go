package supervisor

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// newTestSupervisor is a supervisor of run "r" in a temporary run directory, talking to url.
func newTestSupervisor(t *testing.T, url string, nodeRank int) *Supervisor {
	t.Helper()
	dir := t.TempDir()
	s, err := New(api.SupervisorConfig{RunID: "r", Token: "tok", ServerURL: url, Dir: filepath.Join(dir, "run"),
		CacheDir: filepath.Join(dir, "cache")}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s.spec = &api.RunSpec{RunID: "r", NodeRank: nodeRank, Nodes: []string{"10.0.0.1", "10.0.0.2"}}
	return s
}

// The token leaves the node's disk when the supervisor is done; the rest of the config stays.
func TestForgetToken(t *testing.T) {
	s := newTestSupervisor(t, "http://127.0.0.1:1", 0)
	if err := os.MkdirAll(s.cfg.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.cfg.Dir, ConfigFile)
	orig := `{"run_id":"r","token":"r.1.99.abc","server_url":"http://x","node_id":"n1","future_field":{"a":1}}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	s.forgetToken()
	var got map[string]any
	if err := json.Unmarshal([]byte(readFileT(t, path)), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"run_id": "r", "server_url": "http://x", "node_id": "n1", "future_field": map[string]any{"a": 1.0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config after the run (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, %v; want 0600", fi.Mode(), err)
	}

	other := `{"run_id":"another","token":"another.1.99.abc"}`
	if err := os.WriteFile(path, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	s.forgetToken()
	if got := readFileT(t, path); got != other {
		t.Errorf("another run's config was changed: %s", got)
	}
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// artifactServer answers artifact registrations: waiting for node 1 the first `waits` times.
type artifactServer struct {
	mu      sync.Mutex
	waits   int
	reports []api.ArtifactsReport
}

func (a *artifactServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rep api.ArtifactsReport
	b, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/api/runs/r/artifacts" || json.Unmarshal(b, &rep) != nil {
		http.Error(w, "unexpected "+r.URL.Path, http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reports = append(a.reports, rep)
	reply := api.ArtifactsReply{}
	if len(a.reports) <= a.waits {
		reply.WaitingFor = []int{1}
	}
	_ = json.NewEncoder(w).Encode(reply)
}

// Node 0 registers its part again until the server has every node's; another node registers
// once and is done.
func TestRegisterWaitsForTheOtherNodes(t *testing.T) {
	defer func(p struct{ first, max time.Duration }) { nodeWaitPoll = p }(nodeWaitPoll)
	nodeWaitPoll.first, nodeWaitPoll.max = time.Millisecond, time.Millisecond
	for _, tt := range []struct {
		node, wantCalls int
	}{{0, 3}, {1, 1}} {
		srv := &artifactServer{waits: 2}
		hs := httptest.NewServer(srv)
		s := newTestSupervisor(t, hs.URL, tt.node)
		rep := api.ArtifactsReport{Artifacts: "m", NamedOutputs: map[string]string{"model": "n"}}
		if err := s.outputs.register(t.Context(), rep); err != nil {
			t.Fatalf("node %d: register: %v", tt.node, err)
		}
		hs.Close()
		if len(srv.reports) != tt.wantCalls {
			t.Errorf("node %d registered %d times, want %d", tt.node, len(srv.reports), tt.wantCalls)
		}
		rep.Node = tt.node
		for i, got := range srv.reports {
			if diff := cmp.Diff(rep, got); diff != "" {
				t.Errorf("node %d, registration %d (-want +got):\n%s", tt.node, i+1, diff)
			}
		}
	}
}

// A worker's part is laid out as it appears in the run's artifacts: per-rank logs under their
// global rank, its merged log as std_log_node_<n>.txt, its system logs in their own folder.
func TestCollectOfAWorkerNode(t *testing.T) {
	s := newTestSupervisor(t, "http://127.0.0.1:1", 1)
	wd := filepath.Join(s.cfg.Dir, WorkDirName)
	files := map[string]string{
		filepath.Join(s.cfg.Dir, UserLogsDir, StdLogFile):              "[rank 2] hi\n",
		filepath.Join(s.cfg.Dir, UserLogsDir, "std_log_process_2.txt"): "hi\n",
		filepath.Join(s.cfg.Dir, SystemLogsDir, "env_build.txt"):       "built\n",
		filepath.Join(wd, "outputs", "rank_2.txt"):                     "2\n",
		filepath.Join(s.cfg.Dir, "named-outputs", "model", "w.bin"):    "w\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &workspace{dir: wd, outputDirs: map[string]string{"model": filepath.Join(s.cfg.Dir, "named-outputs", "model")}}
	rep, _, _, err := s.outputs.collect(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"logs", "outputs", "outputs/rank_2.txt", "system_logs", "system_logs/node_1", "system_logs/node_1/env_build.txt",
		"user_logs", "user_logs/std_log_node_1.txt", "user_logs/std_log_process_2.txt"}
	if diff := cmp.Diff(want, s.manifestPaths(t, rep.Artifacts)); diff != "" {
		t.Errorf("worker's artifacts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"w.bin"}, s.manifestPaths(t, rep.NamedOutputs["model"])); diff != "" {
		t.Errorf("worker's output model (-want +got):\n%s", diff)
	}
}

func (s *Supervisor) manifestPaths(t *testing.T, hash string) []string {
	t.Helper()
	f, err := s.cache.Open(hash)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := snapshot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range m.Entries {
		out = append(out, e.Path)
	}
	return out
}

// A link in outputs/, logs/ or a named output that points outside its tree is left out of what
// is registered, and the run says which: never followed (the node's file is not read), and never
// able to fail the download of the run's logs. Links that stay inside are kept.
func TestCollectLeavesOutLinksThatLeave(t *testing.T) {
	s := newTestSupervisor(t, "http://127.0.0.1:1", 0)
	wd := filepath.Join(s.cfg.Dir, WorkDirName)
	named := filepath.Join(s.cfg.Dir, "named-outputs", "model")
	for p, c := range map[string]string{
		filepath.Join(wd, "outputs", "model.bin"): "w\n",
		filepath.Join(named, "w.bin"):             "w\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(wd, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		filepath.Join(wd, "logs", "l"):         "/etc/passwd",
		filepath.Join(wd, "outputs", "latest"): "model.bin",
		filepath.Join(wd, "outputs", "logs"):   "../logs",
		filepath.Join(wd, "outputs", "code"):   "../../train.py",
		filepath.Join(wd, "outputs", "abs"):    filepath.Join(wd, "outputs", "model.bin"),
		filepath.Join(named, "up"):             "../../../../etc",
		filepath.Join(named, "current"):        "w.bin",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	w := &workspace{dir: wd, outputDirs: map[string]string{"model": named}}
	rep, _, _, err := s.outputs.collect(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"logs", "outputs", "outputs/latest", "outputs/logs", "outputs/model.bin", "system_logs", "user_logs"}
	if diff := cmp.Diff(want, s.manifestPaths(t, rep.Artifacts)); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"current", "w.bin"}, s.manifestPaths(t, rep.NamedOutputs["model"])); diff != "" {
		t.Errorf("output model (-want +got):\n%s", diff)
	}
	wantWarnings := []string{
		"outputs/abs -> " + filepath.Join(wd, "outputs", "model.bin") + ": a symbolic link with an absolute target; " +
			"make it relative (ln -sr) so that it stays inside the run's artifacts; it was not collected (nor what it points at)",
		"outputs/code -> ../../train.py: a symbolic link that points outside the run's artifacts; it was not collected (nor what it points at)",
		"logs/l -> /etc/passwd: a symbolic link that points outside the run's artifacts; it was not collected (nor what it points at)",
		"output model: up -> ../../../../etc: a symbolic link that points outside the output; it was not collected (nor what it points at)",
	}
	if diff := cmp.Diff(wantWarnings, s.takeWarnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
