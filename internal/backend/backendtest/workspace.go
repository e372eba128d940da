package backendtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// Workspace is a workspace server as far as supervisors see it: the routes a supervisor calls
// (its run's spec, status reports, heartbeats, log lines, metrics, artifacts, blobs), served
// over HTTP from a real blob store, recording what each run delivered so that a test can check
// what a backend really brings back. It authenticates runs by their token, as the server does.
type Workspace struct {
	// URL is where the workspace answers (http://127.0.0.1:port).
	URL string
	// Blobs is its blob store: code snapshots are put here for runs, outputs arrive here.
	Blobs *blob.Store

	srv *httptest.Server
	mux *http.ServeMux

	mu   sync.Mutex
	runs map[string]*wsRun
}

// wsRun is one run as the workspace knows it.
type wsRun struct {
	token       string
	spec        job.Spec
	ranks       map[string]int // node id → rank ("" is rank 0)
	nodes       int
	specFetches int
	cancel      bool
	reports     []api.StatusReport
	logs        map[string]map[int64]string // file → seq → text
	artifacts   map[int]api.ArtifactsReport // by node rank
}

// NewWorkspace starts a workspace for a test; it stops at the test's end.
func NewWorkspace(t testing.TB) *Workspace {
	t.Helper()
	blobs, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &Workspace{Blobs: blobs, mux: http.NewServeMux(), runs: map[string]*wsRun{}}
	w.routes()
	w.srv = httptest.NewServer(w.mux)
	w.URL = w.srv.URL
	t.Cleanup(w.srv.Close)
	return w
}

// Addr is the workspace's host:port.
func (w *Workspace) Addr() string { return strings.TrimPrefix(w.URL, "http://") }

// Handle adds a route of the harness's own (a cluster's agent routes, say) beside the
// supervisor's.
func (w *Workspace) Handle(pattern string, h http.Handler) { w.mux.Handle(pattern, h) }

// AddRun makes a run known: its supervisors authenticate with token and get spec. nodes is how
// many nodes run it; ranks maps the node ids their supervisors name to ranks (nil: one node).
func (w *Workspace) AddRun(runID, token string, spec job.Spec, nodes int, ranks map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs[runID] = &wsRun{token: token, spec: spec, ranks: ranks, nodes: max(nodes, 1),
		logs: map[string]map[int64]string{}, artifacts: map[int]api.ArtifactsReport{}}
}

// RequestCancel makes the run's next heartbeat replies ask its supervisors to stop.
func (w *Workspace) RequestCancel(runID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.runs[runID]; r != nil {
		r.cancel = true
	}
}

func (w *Workspace) routes() {
	w.mux.HandleFunc("GET /api/runs/{id}/spec", w.run(w.spec))
	w.mux.HandleFunc("POST /api/runs/{id}/status", w.run(w.status))
	w.mux.HandleFunc("POST /api/runs/{id}/heartbeat", w.run(w.heartbeat))
	w.mux.HandleFunc("POST /api/runs/{id}/logs", w.run(w.logLines))
	w.mux.HandleFunc("POST /api/runs/{id}/metrics", w.run(w.metrics))
	w.mux.HandleFunc("POST /api/runs/{id}/artifacts", w.run(w.registerArtifacts))
	w.mux.HandleFunc("POST /api/blobs/missing", w.missing)
	w.mux.HandleFunc("PUT /api/blobs/{hash}", w.putBlob)
	w.mux.HandleFunc("POST /api/blobs/bundle", w.putBundle)
	w.mux.HandleFunc("GET /api/blobs/{hash}", w.getBlob)
}

// run authenticates a run's route by its token and hands the handler the run, locked.
func (w *Workspace) run(h func(*wsRun, *http.Request) (any, error)) http.HandlerFunc {
	return func(rw http.ResponseWriter, req *http.Request) {
		w.mu.Lock()
		defer w.mu.Unlock()
		r := w.runs[req.PathValue("id")]
		if r == nil || req.Header.Get("Authorization") != "Bearer "+r.token {
			reply(rw, http.StatusUnauthorized, api.ErrorBody{Error: "unknown run or wrong token", Code: "unauthorized"})
			return
		}
		out, err := h(r, req)
		if err != nil {
			reply(rw, http.StatusBadRequest, api.ErrorBody{Error: err.Error(), Code: "bad_request"})
			return
		}
		reply(rw, http.StatusOK, out)
	}
}

func reply(rw http.ResponseWriter, code int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	_ = json.NewEncoder(rw).Encode(v)
}

func readBody(req *http.Request, v any) error {
	if err := json.NewDecoder(io.LimitReader(req.Body, 64<<20)).Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", req.URL.Path, err)
	}
	return nil
}

func (w *Workspace) spec(r *wsRun, req *http.Request) (any, error) {
	rank, ok := r.ranks[req.URL.Query().Get("node")]
	if !ok && req.URL.Query().Get("node") != "" && r.ranks != nil {
		return nil, fmt.Errorf("node %q has no place in this run", req.URL.Query().Get("node"))
	}
	r.specFetches++
	addrs := make([]string, r.nodes) // every node of the engines the suite runs is on this machine
	for i := range addrs {
		addrs[i] = "127.0.0.1"
	}
	return api.RunSpec{RunID: req.PathValue("id"), Spec: r.spec, WorkspaceURL: w.URL, CancelGraceSeconds: 2,
		HeartbeatSeconds: 1, Attempt: 1, Nodes: addrs, NodeRank: rank}, nil
}

func (w *Workspace) status(r *wsRun, req *http.Request) (any, error) {
	var rep api.StatusReport
	if err := readBody(req, &rep); err != nil {
		return nil, err
	}
	if !rep.State.Valid() {
		return nil, fmt.Errorf("unknown state %q", rep.State)
	}
	r.reports = append(r.reports, rep)
	return api.StatusReply{State: rep.State, Cancel: r.cancel}, nil
}

func (w *Workspace) heartbeat(r *wsRun, _ *http.Request) (any, error) {
	st := job.Queued
	if n := len(r.reports); n > 0 {
		st = r.reports[n-1].State
	}
	return api.StatusReply{State: st, Cancel: r.cancel}, nil
}

// logLines keeps each numbered line once and acknowledges the highest gap-free number.
func (w *Workspace) logLines(r *wsRun, req *http.Request) (any, error) {
	var b api.LogBatch
	if err := readBody(req, &b); err != nil {
		return nil, err
	}
	if b.File == "" {
		b.File = "std_log.txt"
	}
	lines := r.logs[b.File]
	if lines == nil {
		lines = map[int64]string{}
		r.logs[b.File] = lines
	}
	for _, l := range b.Lines {
		if _, ok := lines[l.Seq]; !ok && l.Seq > 0 {
			lines[l.Seq] = l.Text
		}
	}
	acked := int64(0)
	for hasLine(lines, acked+1) {
		acked++
	}
	return api.Ack{Acked: acked}, nil
}

func hasLine(lines map[int64]string, seq int64) bool { _, ok := lines[seq]; return ok }

func (w *Workspace) metrics(_ *wsRun, req *http.Request) (any, error) {
	var b api.MetricBatch
	if err := readBody(req, &b); err != nil {
		return nil, err
	}
	acked := int64(0)
	for _, m := range b.Metrics {
		acked = max(acked, m.Seq)
	}
	return api.Ack{Acked: acked}, nil
}

// registerArtifacts keeps each node's part once; node 0 hears which nodes are still missing.
func (w *Workspace) registerArtifacts(r *wsRun, req *http.Request) (any, error) {
	var rep api.ArtifactsReport
	if err := readBody(req, &rep); err != nil {
		return nil, err
	}
	if old, ok := r.artifacts[rep.Node]; ok && old.Artifacts != rep.Artifacts {
		return nil, fmt.Errorf("node %d registered other artifacts before", rep.Node)
	}
	r.artifacts[rep.Node] = rep
	var waiting []int
	for n := range r.nodes {
		if _, ok := r.artifacts[n]; !ok {
			waiting = append(waiting, n)
		}
	}
	return api.ArtifactsReply{WaitingFor: waiting}, nil
}

func (w *Workspace) missing(rw http.ResponseWriter, req *http.Request) {
	var m api.MissingRequest
	if err := readBody(req, &m); err != nil {
		reply(rw, http.StatusBadRequest, api.ErrorBody{Error: err.Error()})
		return
	}
	reply(rw, http.StatusOK, api.MissingResponse{Missing: append([]string{}, w.Blobs.Missing(m.Hashes)...)})
}

func (w *Workspace) putBlob(rw http.ResponseWriter, req *http.Request) {
	if _, _, err := w.Blobs.Put(req.Body, req.PathValue("hash")); err != nil {
		reply(rw, http.StatusBadRequest, api.ErrorBody{Error: err.Error()})
		return
	}
	rw.WriteHeader(http.StatusCreated)
}

func (w *Workspace) putBundle(rw http.ResponseWriter, req *http.Request) {
	n, b, err := w.Blobs.PutBundle(req.Body)
	if err != nil {
		reply(rw, http.StatusBadRequest, api.ErrorBody{Error: err.Error()})
		return
	}
	reply(rw, http.StatusOK, api.BundleResponse{Count: n, Bytes: b})
}

func (w *Workspace) getBlob(rw http.ResponseWriter, req *http.Request) {
	f, err := w.Blobs.Open(req.PathValue("hash"))
	if err != nil {
		reply(rw, http.StatusNotFound, api.ErrorBody{Error: err.Error(), Code: "not_found"})
		return
	}
	defer f.Close()
	rw.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(rw, f)
}

// Delivered is what a run's supervisors (or their stand-ins) delivered to the workspace.
type Delivered struct {
	// SpecFetches counts how often a supervisor fetched the run's spec (once per supervisor).
	SpecFetches int
	// States are the reported states in order; Final the last report of a terminal state by
	// node 0 (the other nodes of a multi-node run report only their own failure).
	States []job.State
	Final  *api.StatusReport
	// Logs are each log file's lines (std_log.txt, std_log_node_<n>.txt), gap-free from line 1.
	Logs map[string][]string
	// Artifacts are the registered artifacts by node rank.
	Artifacts map[int]api.ArtifactsReport
}

// Delivered returns what the run received so far.
func (w *Workspace) Delivered(runID string) Delivered {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := Delivered{Logs: map[string][]string{}, Artifacts: map[int]api.ArtifactsReport{}}
	r := w.runs[runID]
	if r == nil {
		return d
	}
	d.SpecFetches = r.specFetches
	for i, rep := range r.reports {
		d.States = append(d.States, rep.State)
		if rep.State.Terminal() && rep.Node == 0 {
			d.Final = &r.reports[i]
		}
	}
	for file, lines := range r.logs {
		for seq := int64(1); hasLine(lines, seq); seq++ {
			d.Logs[file] = append(d.Logs[file], lines[seq])
		}
	}
	for n, a := range r.artifacts {
		d.Artifacts[n] = a
	}
	return d
}

// File reads a file of a manifest stored in the workspace (a run's artifacts).
func (w *Workspace) File(manifest, path string) (string, error) {
	f, err := w.Blobs.Open(manifest)
	if err != nil {
		return "", fmt.Errorf("manifest %s: %w", manifest, err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return "", err
	}
	m, err := snapshot.Decode(data)
	if err != nil {
		return "", fmt.Errorf("manifest %s: %w", manifest, err)
	}
	i := slices.IndexFunc(m.Entries, func(e snapshot.Entry) bool { return e.Path == path })
	if i < 0 {
		return "", fmt.Errorf("%w: %s is not in manifest %s", errNotInManifest, path, manifest)
	}
	b, err := w.Blobs.Open(m.Entries[i].Hash)
	if err != nil {
		return "", err
	}
	defer b.Close()
	content, err := io.ReadAll(b)
	return string(content), err
}

var errNotInManifest = errors.New("no such file")

// PutTree stores files (path → content) as a tree in the workspace and returns its manifest's
// hash, as `hangar job create` uploads a code snapshot.
func (w *Workspace) PutTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := snapshot.FromDir(t.Context(), dir, w.Blobs)
	if err != nil {
		t.Fatal(err)
	}
	data, hash, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Blobs.PutBytes(data); err != nil {
		t.Fatal(err)
	}
	return hash
}
