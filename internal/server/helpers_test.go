package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/controller/endpoints"
	"github.com/hangar-ml/hangar/internal/controller/instances"
	"github.com/hangar-ml/hangar/internal/controller/parents"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving/router"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

const adminToken = "admin-secret"

// testServer is the real server over a real store and blob store, with the fake backend for
// "local", behind httptest.
type testServer struct {
	srv  *Server
	url  string
	ctrl *controller.Controller
	// parents is the parent loop (sweeps, pipelines) over ctrl.
	parents *parents.Loop
	fake    *backendtest.Fake
	store   *store.Store
	blobs   *blob.Store
	admin   *api.Client
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "workspace.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range compute.Builtin(time.Now().UTC()) {
		if err := st.Cluster.EnsureCompute(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	fake := backendtest.New()
	backends := map[string]backend.Backend{compute.TypeLocal: fake}
	ctrl := controller.New(controller.Config{
		Store: st, Blobs: blobs, Backends: backends, Tokens: tokens.Run{Key: []byte("run key")}, Log: log,
		Creators: map[string]controller.Creator{"command": controller.CommandJob, "parallel": controller.ParallelJob,
			"sweep": controller.SweepJob, "pipeline": controller.PipelineJob},
	})
	ts := &testServer{ctrl: ctrl, fake: fake, store: st, blobs: blobs,
		parents: parents.New(parents.Config{Runs: ctrl, Resolver: ctrl.Parents, Store: st.Parents, Reader: st.Runs, Log: log})}
	serve := endpoints.New(endpoints.Deps{Store: endpoints.Store{Serving: st.Serving, Runs: st.Runs, Cluster: st.Cluster}, Runs: ctrl, Resolver: ctrl.Workspace, Key: ctrl.Tokens.Key, Log: log}, router.Config{Log: log})
	ts.srv = New(Config{
		Store: st, Blobs: blobs, Controller: ctrl, Backends: backends, AdminToken: adminToken,
		URL: func() string { return ts.url }, Workspace: dir, Log: log, Serving: serve,
		Instances: instances.New(instances.Store{Instances: st.Instances, Cluster: st.Cluster, Runs: st.Runs}, ctrl, ctrl.Secrets, nil, log),
	})
	hs := httptest.NewServer(ts.srv.Handler())
	t.Cleanup(hs.Close)
	ts.url = hs.URL
	ts.admin = api.NewClient(hs.URL, adminToken)
	return ts
}

// runLoop runs the controller's run loop and the parent loop until the test ends.
func (ts *testServer) runLoop(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{}, 2)
	go func() { ts.ctrl.Run(ctx); done <- struct{}{} }()
	go func() { ts.parents.Run(ctx); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })
}

// runClient is a supervisor's client for a run, with that run's token.
func (ts *testServer) runClient(id string) *api.Client {
	return api.NewClient(ts.url, ts.ctrl.RunToken(id))
}

// createJob creates a job through the API.
func (ts *testServer) createJob(t testing.TB, name string) *api.RunDetail {
	t.Helper()
	d, err := ts.admin.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: name, Command: "python train.py"}})
	if err != nil {
		t.Fatalf("create job %s: %v", name, err)
	}
	return d
}

// report sends a supervisor status report with the run's token.
func (ts *testServer) report(t testing.TB, id string, state job.State, exit *int) *api.StatusReply {
	t.Helper()
	reply, err := ts.runClient(id).Runs.ReportStatus(t.Context(), id, api.StatusReport{State: state, ExitCode: exit, Time: time.Now().UTC()})
	if err != nil {
		t.Fatalf("report %s for %s: %v", state, id, err)
	}
	return reply
}

// shipLines ships lines numbered from..to (inclusive) of the run's std log, text "line N".
func (ts *testServer) shipLines(t testing.TB, id string, from, to int) {
	t.Helper()
	var b api.LogBatch
	for i := from; i <= to; i++ {
		b.Lines = append(b.Lines, job.LogLine{Seq: int64(i), Text: lineText(i), Time: time.Now().UTC()})
	}
	ack, err := ts.runClient(id).Runs.ShipLogs(t.Context(), id, b)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Acked != int64(to) {
		t.Fatalf("shipped lines %d..%d, acked %d", from, to, ack.Acked)
	}
}

func lineText(i int) string { return "line " + strconv.Itoa(i) }

// raw sends a request with an optional bearer token and returns the status and decoded error body.
func (ts *testServer) raw(t testing.TB, token, method, path, body string) (int, api.ErrorBody) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		if err := json.Unmarshal(b, &eb); err != nil {
			t.Errorf("%s %s: error body is not JSON: %q", method, path, b)
		}
	}
	return resp.StatusCode, eb
}

// apiStatus returns the HTTP status and code of an *api.Error (0 and "" for nil).
func apiStatus(t testing.TB, err error) (int, string) {
	t.Helper()
	if err == nil {
		return 0, ""
	}
	var e *api.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an API error", err, err)
	}
	return e.Status, e.Code
}
