package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// runToken reads a run's token from its supervisor.json, as anyone who can read the node's disk
// would; "" once it is gone.
func runToken(t *testing.T, w *ws, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, "local", "runs", id, "supervisor.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg api.SupervisorConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Token
}

// httpStatus is the status of an API error (0 when the call succeeded).
func httpStatus(err error) (int, string) {
	var e *api.Error
	if errors.As(err, &e) {
		return e.Status, e.Message
	}
	return 0, ""
}

// The token of a finished run, read from the node's disk while the run was live, rewrites
// nothing: log lines, metrics, the artifact list and the status are refused with the reason,
// job show and job download are as the run left them (also after a server restart), and the
// token file no longer holds it. A run's token never reaches another run.
func TestFaultFinishedRunCannotBeRewritten(t *testing.T) {
	w := newWS(t, "--run-token-grace", "1s")
	dir := t.TempDir()
	gate := filepath.Join(runsSee(t), "gate")
	writeFiles(t, dir, map[string]string{
		"job.yml": `command: >-
  echo started; while [ ! -f ` + gate + ` ]; do sleep 0.1; done;
  echo weights > outputs/model.txt;
  echo '{"name": "accuracy", "value": 0.5}' >> $HANGAR_METRICS_FILE;
  echo done
`,
		"other.yml": "command: echo other\n",
	})
	other := w.create(filepath.Join(dir, "other.yml"))
	id := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, time.Minute, id+" to start", func() bool { return logHas(w, id, "started") })
	tok := runToken(t, w, id)
	if tok == "" {
		t.Fatal("no token in supervisor.json while the run is live")
	}
	ctx := context.Background()
	attacker := api.NewClient(w.client().BaseURL(), tok)
	w.waitStatus(other, time.Minute, job.Completed)
	_, err := attacker.Runs.ShipLogs(ctx, other, api.LogBatch{File: "std_log.txt", Lines: []job.LogLine{{Seq: 2, Text: "INJECTED"}}})
	if st, msg := httpStatus(err); st != http.StatusForbidden {
		t.Errorf("a run's token on another run = %d %q, want 403", st, msg)
	}

	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before := w.waitStatus(id, time.Minute, job.Completed, job.Failed)
	if before.Status != job.Completed {
		t.Fatalf("run ended %s: %s", before.Status, before.StatusReason)
	}
	testwait.Within(t, 30*time.Second, "the token to leave supervisor.json", func() bool { return runToken(t, w, id) == "" })

	// Once the grace after the end passed, every write is refused and says why.
	testwait.Within(t, 30*time.Second, "the token to be refused", func() bool {
		_, err := attacker.Runs.Heartbeat(ctx, id)
		st, _ := httpStatus(err)
		return st == http.StatusUnauthorized
	})
	// What an attacker would send: the next log line, a metric, an empty artifact list.
	lines, err := w.client().Jobs.Logs(ctx, id, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	next := lines.Next + 1
	empty := []byte(`{"entries":[]}`)
	emptyHash := fmt.Sprintf("%x", sha256.Sum256(empty))
	if err := w.client().Blobs.Put(ctx, emptyHash, bytes.NewReader(empty), int64(len(empty))); err != nil {
		t.Fatal(err)
	}
	writes := map[string]error{}
	_, writes["log lines"] = attacker.Runs.ShipLogs(ctx, id, api.LogBatch{File: "std_log.txt", Lines: []job.LogLine{{Seq: 1, Text: "REWRITTEN"}, {Seq: next, Text: "INJECTED"}}})
	_, writes["metrics"] = attacker.Runs.ShipMetrics(ctx, id, api.MetricBatch{Metrics: []job.Metric{{Seq: 99, Name: "accuracy", Value: 1, Time: time.Now()}}})
	_, writes["artifacts"] = attacker.Runs.ReportArtifacts(ctx, id, api.ArtifactsReport{Artifacts: emptyHash})
	_, writes["status"] = attacker.Runs.ReportStatus(ctx, id, api.StatusReport{State: job.Failed, Reason: "forged", Time: time.Now()})
	writes["blob"] = attacker.Blobs.Put(ctx, strings.Repeat("1", 64), strings.NewReader("x"), 1)
	for what, err := range writes {
		st, msg := httpStatus(err)
		if st != http.StatusUnauthorized || !strings.Contains(msg, "run "+id+" ended at ") || !strings.HasSuffix(msg, "; its token is no longer valid") {
			t.Errorf("%s with the finished run's token = %d %q, want 401 saying the run ended", what, st, msg)
		}
	}

	check := func(when string) {
		t.Helper()
		d := w.show(id)
		if d.Status != job.Completed || d.Metrics["accuracy"] != 0.5 || len(d.Events) != len(before.Events) {
			t.Errorf("%s: job show %s, metrics %v, %d events; want as the run left it", when, d.Status, d.Metrics, len(d.Events))
		}
		if l := w.logs(id); !strings.Contains(l, "done") || strings.Contains(l, "INJECTED") || strings.Contains(l, "REWRITTEN") {
			t.Errorf("%s: log:\n%s", when, l)
		}
		out := t.TempDir()
		w.ok("job", "download", "-n", id, "--all", "--download-path", out)
		if got := readFile(t, filepath.Join(out, id, "artifacts", "outputs", "model.txt")); got != "weights\n" {
			t.Errorf("%s: downloaded model %q", when, got)
		}
	}
	check("after the refused writes")
	w.killServer()
	w.startServer()
	check("after a server restart")
	reportFault(t, faultRow{Target: "local", Injected: "token misuse: a finished run's token (log lines, a metric, an empty artifact list, a status, a blob) and a run's token on another run",
		Runs: 2, Final: "Completed, unchanged (job show, job stream, job download, also after a restart)",
		Reason: "401 run <id> ended at <time>; its token is no longer valid; 403 on another run"})
}
