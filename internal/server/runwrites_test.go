package server

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
)

// endedRun is a job whose supervisor reported it Completed; its token is still within the grace.
func endedRun(t *testing.T, ts *testServer, name string) string {
	t.Helper()
	ts.ctrl.Settings.TokenGrace = time.Hour
	id := ts.createJob(t, name).ID
	ts.report(t, id, job.Running, nil)
	ts.shipLines(t, id, 1, 2)
	exit := 0
	ts.report(t, id, job.Completed, &exit)
	return id
}

// Every write of a finished run's token is refused by the one check, with the same status and
// reason, whichever route it takes: native, MLflow tracking, MLflow artifacts, the MLflow UI's
// paths, blobs. Reads still answer.
func TestEndedRunTokenWritesNothing(t *testing.T) {
	ts := newTestServer(t)
	id := endedRun(t, ts, "done")
	tok := ts.ctrl.RunToken(id)
	run := `{"run_id":"` + id + `"}`
	reason := "run " + id + " ended (Completed) at "
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/api/runs/" + id + "/logs", `{"lines":[{"seq":3,"text":"INJECTED"}]}`},
		{"POST", "/api/runs/" + id + "/metrics", `{"metrics":[{"seq":1,"name":"acc","value":1}]}`},
		{"POST", "/api/runs/" + id + "/checkpoint", `{}`},
		{"POST", "/api/runs/" + id + "/exec", `{}`},
		{"POST", "/api/runs/" + id + "/serving", `{}`},
		{"PUT", "/api/blobs/" + strings.Repeat("1", 64), "x"},
		{"POST", "/api/blobs/bundle", ""},
		{"POST", mlflowapi.Prefix + "runs/log-batch", `{"run_id":"` + id + `","metrics":[{"key":"acc","value":1,"timestamp":1}]}`},
		{"POST", mlflowapi.Prefix + "runs/log-metric", `{"run_id":"` + id + `","key":"acc","value":1,"timestamp":1}`},
		{"POST", mlflowapi.Prefix + "runs/log-parameter", `{"run_id":"` + id + `","key":"lr","value":"9"}`},
		{"POST", mlflowapi.Prefix + "runs/set-tag", `{"run_id":"` + id + `","key":"t","value":"forged"}`},
		{"POST", mlflowapi.Prefix + "runs/delete-tag", `{"run_id":"` + id + `","key":"t"}`},
		{"POST", mlflowapi.Prefix + "runs/update", `{"run_id":"` + id + `","run_name":"renamed"}`},
		{"POST", mlflowapi.Prefix + "runs/delete", run},
		{"POST", mlflowapi.Prefix + "runs/restore", run},
		{"POST", mlflowapi.Prefix + "runs/log-inputs", run},
		{"POST", mlflowapi.Prefix + "runs/log-model", run},
		{"POST", mlflowapi.Prefix + "experiments/create", `{"name":"late"}`},
		{"POST", "/ajax-api/2.0/mlflow/runs/set-tag", `{"run_id":"` + id + `","key":"t","value":"forged"}`},
		{"PUT", "/api/2.0/mlflow-artifacts/artifacts/0/" + id + "/artifacts/late.txt", "x"},
		{"DELETE", "/api/2.0/mlflow-artifacts/artifacts/0/" + id + "/artifacts/late.txt", ""},
		{"POST", "/api/2.0/mlflow-artifacts/mpu/create/0/" + id + "/artifacts/late.bin", `{"path":"late.bin","num_parts":1}`},
	} {
		st, body := ts.rawBody(t, tok, tc.method, tc.path, tc.body)
		mlflow := isMLflowPath(tc.path)
		switch {
		case st != http.StatusConflict || !strings.Contains(body, reason) || !strings.Contains(body, "its record can no longer change"):
			t.Errorf("%s %s with the ended run's token = %d %s; want 409 saying %q", tc.method, tc.path, st, body, reason)
		case mlflow && !strings.Contains(body, `"error_code":"RESOURCE_CONFLICT"`):
			t.Errorf("%s %s: %s; want MLflow's error shape", tc.method, tc.path, body)
		case !mlflow && !strings.Contains(body, `"code":"`+api.CodeConflict+`"`):
			t.Errorf("%s %s: %s; want Hangar's error shape", tc.method, tc.path, body)
		}
	}
	// Reads answer within the grace; the run is as it ended.
	if st, body := ts.rawBody(t, tok, "GET", mlflowapi.Prefix+"runs/get?run_id="+id, ""); st != http.StatusOK ||
		strings.Contains(body, "forged") || strings.Contains(body, "renamed") || !strings.Contains(body, `"FINISHED"`) {
		t.Errorf("runs/get with the ended run's token = %d %s; want the run as it ended", st, body)
	}
	if lines, err := ts.admin.Jobs.Logs(t.Context(), id, "", 0, 0); err != nil || len(lines.Lines) != 2 {
		t.Errorf("log after the refused writes: %+v, %v; want its 2 lines", lines, err)
	}
}

// The supervisor's last words still arrive within the grace: a retry of its final report (which
// changes nothing, not even warnings), a heartbeat that learns the end, the blob query. Another
// end is refused by the controller, with its own reason.
func TestEndedRunTokenLastWords(t *testing.T) {
	ts := newTestServer(t)
	id := endedRun(t, ts, "last")
	c := ts.runClient(id)
	ctx := t.Context()
	exit := 0
	if reply, err := c.Runs.ReportStatus(ctx, id, api.StatusReport{State: job.Completed, ExitCode: &exit, Time: time.Now(),
		Warnings: []string{"LATE WARNING"}}); err != nil || reply.State != job.Completed {
		t.Errorf("a retry of the final report = %+v, %v; want accepted", reply, err)
	}
	if reply, err := c.Runs.Heartbeat(ctx, id); err != nil || !reply.Cancel {
		t.Errorf("a heartbeat after the end = %+v, %v; want told to stop", reply, err)
	}
	if _, err := c.Blobs.Missing(ctx, []string{strings.Repeat("2", 64)}); err != nil {
		t.Errorf("the blob query after the end: %v", err)
	}
	_, err := c.Runs.ReportStatus(ctx, id, api.StatusReport{State: job.Failed, Reason: "forged", Time: time.Now()})
	if st, _ := apiStatus(t, err); st != http.StatusConflict {
		t.Errorf("another end after the end = %v; want 409", err)
	}
	d, err := ts.admin.Jobs.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != job.Completed || len(d.Warnings) != 0 {
		t.Errorf("job show after the last words: %s, warnings %v; want Completed as it ended", d.Status, d.Warnings)
	}
}

// A run the server ended (its supervisor away: an orphan stopped once its host is back) still
// gets its supervisor's late log lines within the grace, after the stored ones; a stored line is
// never rewritten. A run that Completed gets none (its supervisor shipped its log first).
func TestEndedRunTokenLateLogLines(t *testing.T) {
	ts := newTestServer(t)
	ts.ctrl.Settings.TokenGrace = time.Hour
	ctx := t.Context()
	id := ts.createJob(t, "orphan").ID
	ts.report(t, id, job.Running, nil)
	ts.shipLines(t, id, 1, 2)
	if _, err := ts.admin.Jobs.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	exit := 143
	ts.report(t, id, job.Canceled, &exit)
	c := ts.runClient(id)
	if _, err := c.Runs.ShipLogs(ctx, id, api.LogBatch{File: "std_log.txt", Lines: []job.LogLine{{Seq: 1, Text: "REWRITTEN"}, {Seq: 3, Text: "got TERM"}}}); err != nil {
		t.Errorf("the supervisor's last log lines: %v", err)
	}
	if lines, err := ts.admin.Jobs.Logs(ctx, id, "", 0, 0); err != nil || len(lines.Lines) != 3 ||
		strings.Contains(lines.Lines[0].Text, "REWRITTEN") || lines.Lines[2].Text != "got TERM" {
		t.Errorf("log after the last words: %+v, %v; want the 2 lines as stored and the late one", lines, err)
	}
	done := endedRun(t, ts, "done")
	_, err := ts.runClient(done).Runs.ShipLogs(ctx, done, api.LogBatch{File: "std_log.txt", Lines: []job.LogLine{{Seq: 3, Text: "INJECTED"}}})
	if st, _ := apiStatus(t, err); st != http.StatusConflict {
		t.Errorf("a log line for a Completed run = %v; want 409", err)
	}
}

// rawBody sends a request with a bearer token and returns the status and the body as text.
func (ts *testServer) rawBody(t testing.TB, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Every route a run's token may call that writes (the server's own table: a route added later
// is in it) refuses an ended run's token with the one check's reason, but the supervisor's last
// words and the blob query.
func TestEndedRunTokenEveryWriteRoute(t *testing.T) {
	ts := newTestServer(t)
	id := endedRun(t, ts, "every")
	tok := ts.ctrl.RunToken(id)
	// endedRun Completed: no late log line either (lateLog).
	exempt := []string{"POST /api/runs/{id}/status", "POST /api/runs/{id}/heartbeat", "POST /api/runs/{id}/artifacts", "POST /api/blobs/missing"}
	checked := 0
	for _, rt := range ts.srv.registered() {
		// A pattern without a method is MLflow's ENDPOINT_NOT_FOUND catch-all: it writes nothing
		// (TestMLflowUnknownEndpoints; a POST to it is refused here before routing all the same).
		method, _, withMethod := strings.Cut(rt.pattern, " ")
		if !withMethod || !rt.access.runs || method == http.MethodGet || method == http.MethodHead || slices.Contains(exempt, rt.pattern) {
			continue
		}
		checked++
		resp, err := http.DefaultClient.Do(matrixRequest(t, ts.url, rt.pattern, id, tok))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), "run "+id+" ended (Completed) at ") {
			t.Errorf("%s with an ended run's token = %d %s; want 409 saying the run ended", rt.pattern, resp.StatusCode, b)
		}
	}
	if checked < 20 {
		t.Errorf("checked %d write routes open to run tokens; the table has more", checked)
	}
}
