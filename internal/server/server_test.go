package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

func TestAuth(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r1")
	ts.createJob(t, "r2")
	r1 := ts.ctrl.RunToken("r1")
	forged := "r2" + r1[len("r1"):] // r1's MAC with r2's name
	tests := []struct {
		name         string
		token        string
		method, path string
		body         string
		want         int
		wantCode     string
	}{
		{"health needs no token", "", "GET", "/api/health", "", 200, ""},
		{"no token", "", "GET", "/api/jobs", "", 401, api.CodeAuth},
		{"wrong token", "nope", "GET", "/api/jobs", "", 401, api.CodeAuth},
		{"forged run token", forged, "GET", "/api/runs/r2/spec", "", 401, api.CodeAuth},
		{"no token on a run route", "", "GET", "/api/runs/r1/spec", "", 401, api.CodeAuth},
		{"admin lists jobs", adminToken, "GET", "/api/jobs", "", 200, ""},
		{"admin reaches a run route", adminToken, "GET", "/api/runs/r1/spec", "", 200, ""},
		{"run token, own spec", r1, "GET", "/api/runs/r1/spec", "", 200, ""},
		{"run token, own heartbeat", r1, "POST", "/api/runs/r1/heartbeat", "{}", 200, ""},
		{"run token, another run's spec", r1, "GET", "/api/runs/r2/spec", "", 403, api.CodeNotAllowed},
		{"run token, another run's status", r1, "POST", "/api/runs/r2/status", `{"state":"Failed"}`, 403, api.CodeNotAllowed},
		{"run token, another run's logs", r1, "POST", "/api/runs/r2/logs", `{"lines":[]}`, 403, api.CodeNotAllowed},
		{"run token, another run's artifacts", r1, "POST", "/api/runs/r2/artifacts", `{}`, 403, api.CodeNotAllowed},
		{"run token creates a job", r1, "POST", "/api/jobs", `{"spec":{"command":"x"}}`, 403, api.CodeNotAllowed},
		{"run token cancels a job", r1, "POST", "/api/jobs/r1/cancel", "", 403, api.CodeNotAllowed},
		{"run token reads a job", r1, "GET", "/api/jobs/r1", "", 403, api.CodeNotAllowed},
		{"run token lists computes", r1, "GET", "/api/computes", "", 403, api.CodeNotAllowed},
		{"run token asks for missing blobs", r1, "POST", "/api/blobs/missing", `{"hashes":[]}`, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, eb := ts.raw(t, tt.token, tt.method, tt.path, tt.body)
			if got != tt.want || eb.Code != tt.wantCode {
				t.Errorf("%s %s = %d %q (%s), want %d %q", tt.method, tt.path, got, eb.Code, eb.Error, tt.want, tt.wantCode)
			}
		})
	}
	if got := ts.fake.Canceled(); len(got) != 0 {
		t.Errorf("refused requests reached the backend: cancels %v", got)
	}
	d, err := ts.admin.Jobs.Get(t.Context(), "r2")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != job.Queued {
		t.Errorf("r2 is %s after refused reports, want Queued", d.Status)
	}
}

func TestBlobRoundTrip(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	c := ts.admin
	contents := [][]byte{[]byte("single"), []byte("bundled one"), []byte("bundled two"), {}}
	var hashes []string
	for _, b := range contents {
		h, _, err := blob.HashReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
	}

	missing, err := c.Blobs.Missing(ctx, hashes)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hashes, missing); diff != "" {
		t.Fatalf("missing before upload (-want +got):\n%s", diff)
	}
	if err := c.Blobs.Put(ctx, hashes[0], bytes.NewReader(contents[0]), int64(len(contents[0]))); err != nil {
		t.Fatal(err)
	}
	var bundle bytes.Buffer
	var items []blob.BundleItem
	for i := 1; i < len(contents); i++ {
		b := contents[i]
		items = append(items, blob.BundleItem{Hash: hashes[i], Size: int64(len(b)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	if err := blob.WriteBundle(&bundle, items); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Blobs.PutBundle(ctx, &bundle)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&api.BundleResponse{Count: 3, Bytes: int64(len("bundled one") + len("bundled two"))}, resp); diff != "" {
		t.Errorf("bundle response (-want +got):\n%s", diff)
	}
	missing, err = c.Blobs.Missing(ctx, hashes)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 0 {
		t.Errorf("still missing after upload: %v", missing)
	}
	for i, h := range hashes {
		rc, err := c.Blobs.Open(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, contents[i]) {
			t.Errorf("blob %s = %q, want %q", h, got, contents[i])
		}
	}

	// A run's supervisor may download blobs too.
	ts.createJob(t, "any")
	rc, err := ts.runClient("any").Blobs.Open(ctx, hashes[0])
	if err != nil {
		t.Errorf("run token cannot download a blob: %v", err)
	} else {
		rc.Close()
	}

	unknown := strings.Repeat("ab", 32)
	_, err = c.Blobs.Open(ctx, unknown)
	if st, code := apiStatus(t, err); st != http.StatusNotFound || code != api.CodeNotFound {
		t.Errorf("download of an unknown blob = %d %q, want 404", st, code)
	}
	err = c.Blobs.Put(ctx, unknown, strings.NewReader("not what the name says"), -1)
	if st, code := apiStatus(t, err); st != http.StatusBadRequest || code != api.CodeInvalid {
		t.Errorf("upload under a wrong hash = %d %q, want 400", st, code)
	}
	if ts.blobs.Has(unknown) {
		t.Error("a blob that does not match its hash was stored")
	}
	_, err = c.Blobs.Missing(ctx, []string{"../../etc/passwd"})
	if st, _ := apiStatus(t, err); st != http.StatusBadRequest {
		t.Errorf("missing with a bad hash = %d, want 400", st)
	}
	_, err = c.Blobs.PutBundle(ctx, strings.NewReader("not a tar stream"))
	if st, _ := apiStatus(t, err); st != http.StatusBadRequest {
		t.Errorf("bad bundle = %d, want 400", st)
	}
}

func TestJobCreateShowCancel(t *testing.T) {
	ts := newTestServer(t)
	ts.runLoop(t)
	ctx := t.Context()
	created, err := ts.admin.Jobs.Create(ctx, api.CreateJobRequest{
		Spec:     job.Spec{Name: "train-1", DisplayName: "first", Command: "python train.py"},
		Warnings: []string{"client warning"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.ID != "train-1" || created.Status != job.Queued || created.Compute != compute.LocalName {
		t.Errorf("created: %s %s on %s", created.ID, created.Status, created.Compute)
	}
	if diff := cmp.Diff([]string{"client warning"}, created.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	testwait.For(t, "the controller to submit the run", func() bool { return len(ts.fake.Submitted()) == 1 })

	shown, err := ts.admin.Jobs.Get(ctx, "train-1")
	if err != nil {
		t.Fatal(err)
	}
	if shown.DisplayName != "first" || shown.Spec.Command != "python train.py" || len(shown.Events) != 2 {
		t.Errorf("shown: display %q, command %q, %d events", shown.DisplayName, shown.Spec.Command, len(shown.Events))
	}
	list, err := ts.admin.Jobs.List(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "train-1" {
		t.Errorf("list = %+v", list)
	}

	ts.report(t, "train-1", job.Running, nil)
	canceled, err := ts.admin.Jobs.Cancel(ctx, "train-1")
	if err != nil {
		t.Fatal(err)
	}
	if canceled.Status != job.CancelRequested {
		t.Errorf("cancel answered status %s, want CancelRequested", canceled.Status)
	}
	testwait.For(t, "the cancel to reach the backend", func() bool { return len(ts.fake.Canceled()) > 0 })
	code := 143
	if reply := ts.report(t, "train-1", job.Canceled, &code); reply.State != job.Canceled {
		t.Errorf("final report reply %+v", reply)
	}
	shown, err = ts.admin.Jobs.Get(ctx, "train-1")
	if err != nil {
		t.Fatal(err)
	}
	if shown.Status != job.Canceled || shown.ExitCode == nil || *shown.ExitCode != 143 || shown.EndedAt == nil {
		t.Errorf("after cancel: status %s, exit %v, ended %v", shown.Status, shown.ExitCode, shown.EndedAt)
	}
	var states []job.State
	for _, e := range shown.Events {
		states = append(states, e.To)
	}
	want := []job.State{job.NotStarted, job.Queued, job.Running, job.CancelRequested, job.Canceled}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if _, ok := shown.Phases["running"]; !ok {
		t.Errorf("no running phase in %v", shown.Phases)
	}
	if got := ts.fake.Canceled(); len(got) != 1 {
		t.Errorf("backend canceled %v, want once", got)
	}
}

func TestJobShowFailedRun(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ts.shipLines(t, "r", 1, 25)
	code := 1
	_, err := ts.runClient("r").Runs.ReportStatus(t.Context(), "r",
		api.StatusReport{State: job.Failed, ExitCode: &code, Reason: "the command exited with code 1"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := ts.admin.Jobs.Get(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 6; i <= 25; i++ {
		want = append(want, lineText(i))
	}
	if diff := cmp.Diff(want, d.LogTail); diff != "" {
		t.Errorf("log tail (-want +got):\n%s", diff)
	}
	if d.Error != "the command exited with code 1" || d.Status != job.Failed {
		t.Errorf("status %s, error %q", d.Status, d.Error)
	}
}

func TestArtifacts(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	ts.createJob(t, "r")
	rc := ts.runClient("r")
	manifest, err := ts.blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rc.Runs.ReportArtifacts(ctx, "r", api.ArtifactsReport{Artifacts: strings.Repeat("cd", 32)})
	if st, code := apiStatus(t, err); st != http.StatusBadRequest || code != api.CodeInvalid {
		t.Errorf("artifacts not uploaded = %d %q, want 400", st, code)
	}
	if _, err := rc.Runs.ReportArtifacts(ctx, "r", api.ArtifactsReport{Artifacts: manifest, NamedOutputs: map[string]string{"model": manifest}}); err != nil {
		t.Fatal(err)
	}
	got, err := ts.admin.Jobs.Artifacts(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&api.ArtifactsResponse{Artifacts: manifest, NamedOutputs: map[string]string{"model": manifest}}, got); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	d, err := ts.admin.Jobs.Get(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if !d.HasArtifacts || !cmp.Equal(d.Outputs, []string{"model"}) {
		t.Errorf("job show: has artifacts %v, outputs %v", d.HasArtifacts, d.Outputs)
	}
}

func TestComputes(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	if err := ts.store.Cluster.PutCompute(ctx, compute.Target{Name: "hpc", Type: compute.TypeSlurm}); err != nil {
		t.Fatal(err)
	}
	ts.createJob(t, "r")
	cs, err := ts.admin.Computes.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Name, Type, State string
		Default           bool
		Active            int
	}
	var got []view
	for _, c := range cs {
		got = append(got, view{c.Name, c.Type, c.State, c.Default, c.ActiveRuns})
	}
	// The serverless pool is listed unconfigured; this server runs no managed clusters for it.
	want := []view{{"hpc", "slurm", "unsupported", false, 0}, {"local", "local", "ready", true, 1},
		{"serverless", "serverless", "unsupported: this server runs no managed clusters, which serverless jobs run on", false, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("computes (-want +got):\n%s", diff)
	}
	_, err = ts.admin.Computes.Get(ctx, "nope")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("unknown compute = %d, want 404", st)
	}
}

func TestErrorMapping(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	ts.createJob(t, "done")
	ts.report(t, "done", job.Completed, nil)

	tests := []struct {
		name     string
		call     func() error
		want     int
		wantCode string
	}{
		{"unknown job", func() error { _, err := ts.admin.Jobs.Get(ctx, "ghost"); return err }, 404, api.CodeNotFound},
		{"cancel unknown job", func() error { _, err := ts.admin.Jobs.Cancel(ctx, "ghost"); return err }, 404, api.CodeNotFound},
		{"logs of unknown job", func() error { _, err := ts.admin.Jobs.Logs(ctx, "ghost", "", 0, 0); return err }, 404, api.CodeNotFound},
		{"metrics of unknown job", func() error { _, err := ts.admin.Jobs.Metrics(ctx, "ghost"); return err }, 404, api.CodeNotFound},
		{"invalid job", func() error {
			_, err := ts.admin.Jobs.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x", Compute: "nowhere"}})
			return err
		}, 400, api.CodeInvalid},
		{"duplicate name", func() error {
			_, err := ts.admin.Jobs.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x", Name: "done"}})
			return err
		}, 409, api.CodeConflict},
		{"cancel a finished job", func() error { _, err := ts.admin.Jobs.Cancel(ctx, "done"); return err }, 409, api.CodeConflict},
		{"report after the end", func() error {
			_, err := ts.runClient("done").Runs.ReportStatus(ctx, "done", api.StatusReport{State: job.Running})
			return err
		}, 409, api.CodeConflict},
		{"spec of a finished run", func() error { _, err := ts.runClient("done").Runs.Spec(ctx, "done", ""); return err }, 409, api.CodeConflict},
		{"unknown state", func() error {
			_, err := ts.runClient("done").Runs.ReportStatus(ctx, "done", api.StatusReport{State: "Exploded"})
			return err
		}, 400, api.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, code := apiStatus(t, tt.call())
			if st != tt.want || code != tt.wantCode {
				t.Errorf("got %d %q, want %d %q", st, code, tt.want, tt.wantCode)
			}
		})
	}

	for _, path := range []string{"/api/jobs", "/api/runs/done/status", "/api/blobs/missing"} {
		st, eb := ts.raw(t, adminToken, "POST", path, `{"spec": `)
		if st != http.StatusBadRequest || eb.Code != api.CodeInvalid || !strings.Contains(eb.Error, "malformed JSON") {
			t.Errorf("POST %s with bad JSON = %d %q %q, want 400 invalid", path, st, eb.Code, eb.Error)
		}
	}
}

func TestLogsLongPollWakesOnNewLines(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	shipped := make(chan struct{})
	go func() {
		defer close(shipped)
		// Ship once the long poll waits for the run (or the deadline passes: the poll then
		// finds the lines on its first look, which is also right).
		deadline := time.Now().Add(10 * time.Second)
		for !ts.srv.hub.Waiting("r") && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		var b api.LogBatch
		for i := 1; i <= 3; i++ {
			b.Lines = append(b.Lines, job.LogLine{Seq: int64(i), Text: lineText(i)})
		}
		if _, err := ts.runClient("r").Runs.ShipLogs(context.WithoutCancel(t.Context()), "r", b); err != nil {
			t.Errorf("ship: %v", err)
		}
	}()
	// The poll may wait up to 60 s; the lines must end it long before the test gives up.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := ts.admin.Jobs.Logs(ctx, "r", "", 0, 60*time.Second)
	<-shipped
	if err != nil {
		t.Fatalf("long poll: %v", err)
	}
	var texts []string
	for _, l := range resp.Lines {
		texts = append(texts, l.Text)
	}
	if diff := cmp.Diff([]string{"line 1", "line 2", "line 3"}, texts); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if resp.Next != 3 || resp.Done || resp.Status != job.Queued {
		t.Errorf("next %d, done %v, status %s; want 3, false, Queued", resp.Next, resp.Done, resp.Status)
	}
}

func TestLogsLongPollWakesOnEnd(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	ts.shipLines(t, "r", 1, 2)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		deadline := time.Now().Add(10 * time.Second)
		for !ts.srv.hub.Waiting("r") && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if _, err := ts.runClient("r").Runs.ReportStatus(context.WithoutCancel(t.Context()), "r", api.StatusReport{State: job.Completed}); err != nil {
			t.Errorf("report: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := ts.admin.Jobs.Logs(ctx, "r", "", 2, 60*time.Second)
	<-ended
	if err != nil {
		t.Fatalf("long poll: %v", err)
	}
	if len(resp.Lines) != 0 || resp.Next != 2 || !resp.Done || resp.Status != job.Completed {
		t.Errorf("got %d lines, next %d, done %v, status %s; want 0, 2, true, Completed", len(resp.Lines), resp.Next, resp.Done, resp.Status)
	}
}

func TestLogsDone(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	ts.createJob(t, "r")
	ts.shipLines(t, "r", 1, 2500)

	page := func(after int64) *api.LogsResponse {
		t.Helper()
		resp, err := ts.admin.Jobs.Logs(ctx, "r", "", after, 0)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Not terminal: never done, even with every line read.
	if resp := page(2500); resp.Done || len(resp.Lines) != 0 || resp.Next != 2500 {
		t.Errorf("running, all read: done %v, %d lines, next %d", resp.Done, len(resp.Lines), resp.Next)
	}
	ts.report(t, "r", job.Completed, nil)
	// Terminal, but more lines than one page: done only on the page that holds the last line.
	first := page(0)
	if len(first.Lines) != 2000 || first.Next != 2000 || first.Done || first.Lines[0].Seq != 1 {
		t.Errorf("first page: %d lines, next %d, done %v", len(first.Lines), first.Next, first.Done)
	}
	second := page(first.Next)
	if len(second.Lines) != 500 || second.Next != 2500 || !second.Done || second.Lines[0].Seq != 2001 {
		t.Errorf("second page: %d lines, next %d, done %v", len(second.Lines), second.Next, second.Done)
	}
	if second.Status != job.Completed {
		t.Errorf("status %s, want Completed", second.Status)
	}
}

func TestShipLogsIsIdempotent(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "r")
	rc := ts.runClient("r")
	ship := func(seqs ...int64) int64 {
		t.Helper()
		var b api.LogBatch
		for _, s := range seqs {
			b.Lines = append(b.Lines, job.LogLine{Seq: s, Text: lineText(int(s))})
		}
		ack, err := rc.Runs.ShipLogs(t.Context(), "r", b)
		if err != nil {
			t.Fatal(err)
		}
		return ack.Acked
	}
	acks := []int64{ship(1, 2), ship(1, 2, 3), ship(5, 6), ship(4, 5)}
	if diff := cmp.Diff([]int64{2, 3, 3, 5}, acks); diff != "" {
		t.Errorf("acks (-want +got):\n%s", diff)
	}
	resp, err := ts.admin.Jobs.Logs(t.Context(), "r", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, l := range resp.Lines {
		seqs = append(seqs, l.Seq)
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 5}, seqs); diff != "" {
		t.Errorf("stored lines (-want +got):\n%s", diff)
	}
}

func TestPhases(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ev := func(s float64, to job.State) job.Event { return job.Event{Time: at(s), To: to} }
	tests := []struct {
		name   string
		events []job.Event
		now    time.Time
		want   map[string]float64
	}{
		{"no events", nil, at(10), map[string]float64{}},
		{
			name:   "a finished run",
			events: []job.Event{ev(0, job.NotStarted), ev(0, job.Queued), ev(2, job.Preparing), ev(3.5, job.Starting), ev(4, job.Running), ev(14, job.Finalizing), ev(15, job.Completed)},
			now:    at(100),
			want:   map[string]float64{"queued": 2, "preparing": 1.5, "starting": 0.5, "running": 10, "finalizing": 1},
		},
		{
			name:   "the current phase runs until now",
			events: []job.Event{ev(0, job.Queued), ev(5, job.Running)},
			now:    at(65),
			want:   map[string]float64{"queued": 5, "running": 60},
		},
		{
			name:   "time not responding or canceling is no phase",
			events: []job.Event{ev(0, job.Queued), ev(1, job.Running), ev(11, job.NotResponding), ev(41, job.Running), ev(51, job.CancelRequested), ev(53, job.Canceled)},
			now:    at(100),
			want:   map[string]float64{"queued": 1, "running": 20},
		},
		{
			name:   "provisioning",
			events: []job.Event{ev(0, job.Queued), ev(1, job.Provisioning), ev(31, job.Failed)},
			now:    at(100),
			want:   map[string]float64{"queued": 1, "provisioning": 30},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, phases(tt.events, tt.now)); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobShowOutputsInStableOrder(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	ts.createJob(t, "r")
	manifest, err := ts.blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	want := []string{"a", "b", "c", "d", "e", "f"}
	for _, n := range want {
		outs[n] = manifest
	}
	if _, err := ts.runClient("r").Runs.ReportArtifacts(ctx, "r", api.ArtifactsReport{Artifacts: manifest, NamedOutputs: outs}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		d, err := ts.admin.Jobs.Get(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, d.Outputs); diff != "" {
			t.Fatalf("named outputs (-want +got):\n%s", diff)
		}
	}
}
