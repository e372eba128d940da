package server

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// testClock is a settable clock for the controller.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// The token of a run that ended (as an attacker would read it from the node) changes nothing:
// during the grace every write but the supervisor's last words is refused by the one terminal
// check (runwrites.go), and artifacts are frozen; after it
// every run-token route refuses it with the reason, and job show, logs, metrics and artifacts
// stay as they were.
func TestFinishedRunTokenWritesNothing(t *testing.T) {
	ts := newTestServer(t)
	clk := &testClock{now: time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)}
	ts.ctrl.Now = clk.Now
	ts.ctrl.Settings.TokenGrace = time.Minute
	ctx := t.Context()
	ts.createJob(t, "r")
	tok := ts.ctrl.RunToken("r")
	rc := api.NewClient(ts.url, tok)
	ts.shipLines(t, "r", 1, 2)
	if _, err := rc.Runs.ShipMetrics(ctx, "r", api.MetricBatch{Metrics: []job.Metric{{Seq: 1, Name: "accuracy", Value: 0.5, Time: clk.Now()}}}); err != nil {
		t.Fatal(err)
	}
	manifest, err := ts.blobs.PutBytes([]byte(`{"entries":[{"path":"outputs","type":"dir","mode":493}]}`))
	if err != nil {
		t.Fatal(err)
	}
	empty, err := ts.blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Runs.ReportArtifacts(ctx, "r", api.ArtifactsReport{Artifacts: manifest}); err != nil {
		t.Fatal(err)
	}
	zero := 0
	if _, err := rc.Runs.ReportStatus(ctx, "r", api.StatusReport{State: job.Completed, ExitCode: &zero, Time: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	before, err := ts.admin.Jobs.Get(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}

	// Within the grace: a retry of the final report and of the artifacts is fine, nothing new is.
	if _, err := rc.Runs.ReportStatus(ctx, "r", api.StatusReport{State: job.Completed, ExitCode: &zero, Time: clk.Now()}); err != nil {
		t.Errorf("final report retried within the grace: %v", err)
	}
	if _, err := rc.Runs.ReportArtifacts(ctx, "r", api.ArtifactsReport{Artifacts: manifest}); err != nil {
		t.Errorf("artifacts retried within the grace: %v", err)
	}
	frozen := []struct {
		name, method, path, body, want string
	}{
		{"metric", "POST", "/api/runs/r/metrics", `{"metrics":[{"seq":2,"name":"accuracy","value":1}]}`,
			"run r ended (Completed) at 2026-03-01T08:00:00Z: its record can no longer change"},
		{"a known log line", "POST", "/api/runs/r/logs", `{"file":"std_log.txt","lines":[{"seq":1,"text":"REWRITTEN"}]}`,
			"run r ended (Completed) at 2026-03-01T08:00:00Z: its record can no longer change"},
		{"other artifacts", "POST", "/api/runs/r/artifacts", `{"artifacts":"` + empty + `"}`,
			"run r registered its artifacts already (manifest " + manifest + "); they cannot be replaced"},
	}
	for _, tt := range frozen {
		if got, eb := ts.raw(t, tok, tt.method, tt.path, tt.body); got != http.StatusConflict || eb.Error != tt.want {
			t.Errorf("%s within the grace = %d %q, want 409 %q", tt.name, got, eb.Error, tt.want)
		}
	}

	clk.Advance(time.Minute + time.Second)
	h := strings.Repeat("ab", 32)
	routes := []struct{ method, path, body string }{
		{"GET", "/api/runs/r/spec", ""},
		{"POST", "/api/runs/r/status", `{"state":"Running"}`},
		{"POST", "/api/runs/r/heartbeat", `{}`},
		{"POST", "/api/runs/r/logs", `{"file":"std_log.txt","lines":[{"seq":3,"text":"INJECTED"}]}`},
		{"POST", "/api/runs/r/metrics", `{"metrics":[{"seq":2,"name":"accuracy","value":1}]}`},
		{"POST", "/api/runs/r/artifacts", `{"artifacts":"` + empty + `"}`},
		{"POST", "/api/runs/r/exec", `{"node_rank":1,"command":"true"}`},
		{"GET", "/api/runs/r/exec", ""},
		{"GET", "/api/runs/r/exec/x", ""},
		{"POST", "/api/runs/r/exec/x/done", `{}`},
		{"POST", "/api/blobs/missing", `{"hashes":[]}`},
		{"PUT", "/api/blobs/" + h, "data"},
		{"POST", "/api/blobs/bundle", ""},
		{"GET", "/api/blobs/" + manifest, ""},
	}
	for _, rt := range routes {
		got, eb := ts.raw(t, tok, rt.method, rt.path, rt.body)
		if got != http.StatusUnauthorized || eb.Code != api.CodeAuth || eb.Error != "run r ended at 2026-03-01T08:00:00Z; its token is no longer valid" {
			t.Errorf("%s %s after the grace = %d %q %q, want 401 saying the run ended", rt.method, rt.path, got, eb.Code, eb.Error)
		}
	}

	after, err := ts.admin.Jobs.Get(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("job show changed (-before +after):\n%s", diff)
	}
	if after.Metrics["accuracy"] != 0.5 {
		t.Errorf("accuracy %v, want 0.5", after.Metrics["accuracy"])
	}
	logs, err := ts.admin.Jobs.Logs(ctx, "r", "", 0, 0)
	if err != nil || len(logs.Lines) != 2 {
		t.Errorf("logs %+v, %v; want the run's 2 lines", logs, err)
	}
	arts, err := ts.admin.Jobs.Artifacts(ctx, "r")
	if err != nil || arts.Artifacts != manifest {
		t.Errorf("artifacts %+v, %v; want %s", arts, err, manifest)
	}
	if ts.blobs.Has(h) {
		t.Error("a refused token stored a blob")
	}
}

// A requeued run's new attempt refuses its old attempt's token, header or not.
func TestOldAttemptTokenRefused(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	old := ts.ctrl.RunToken("r")
	if _, err := ts.store.RunWrites.UpdateRun(t.Context(), "r", func(r *job.Run) ([]job.Event, error) {
		r.Attempt = 2
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, eb := ts.raw(t, old, "POST", "/api/runs/r/heartbeat", "{}")
	if got != http.StatusConflict || eb.Error != "run r is on attempt 2; this token is for attempt 1" {
		t.Errorf("old attempt's heartbeat = %d %q, want 409", got, eb.Error)
	}
	if got, eb := ts.raw(t, ts.ctrl.RunToken("r"), "POST", "/api/runs/r/heartbeat", "{}"); got != http.StatusOK {
		t.Errorf("new attempt's heartbeat = %d %q", got, eb.Error)
	}
}

// A heartbeat reply carries a fresh token the supervisor switches to.
func TestHeartbeatRenewsToken(t *testing.T) {
	ts := newTestServer(t)
	clk := &testClock{now: time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)}
	ts.ctrl.Now = clk.Now
	ts.ctrl.Settings.TokenTTL = time.Hour
	ts.createJob(t, "r")
	rc := ts.runClient("r")
	ts.report(t, "r", job.Running, nil)
	for i := range 5 {
		clk.Advance(50 * time.Minute)
		reply, err := rc.Runs.Heartbeat(t.Context(), "r")
		if err != nil {
			t.Fatalf("heartbeat %d: %v", i, err)
		}
		if reply.Token == "" {
			t.Fatalf("heartbeat %d: no fresh token", i)
		}
		rc.SetToken(reply.Token)
	}
}
