package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// Cancel sends SIGTERM to the command's process group, SIGKILL after the grace period, and keeps
// what the job wrote before.
func TestCancel(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": `command: >-
  trap 'echo got SIGTERM; echo partial > outputs/partial.txt; exit 143' TERM;
  echo started; while true; do sleep 0.1; done
`})
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, 30*time.Second, "the job to log", func() bool {
		return logHas(w, name, "started")
	})
	w.ok("job", "cancel", "-n", name, "--yes")
	d := w.waitStatus(name, 30*time.Second, job.Canceled, job.Failed, job.Completed)
	if d.Status != job.Canceled {
		t.Fatalf("status = %s (%s), want Canceled", d.Status, d.StatusReason)
	}
	if !logHas(w, name, "got SIGTERM") {
		t.Errorf("the command did not see SIGTERM")
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--download-path", out)
	if got := readFile(t, filepath.Join(out, name, "artifacts", "outputs", "partial.txt")); got != "partial\n" {
		t.Errorf("outputs written on SIGTERM = %q", got)
	}
	if r := w.run("job", "stream", "-n", name); r.code != 4 {
		t.Errorf("job stream of a canceled job exit = %d, want 4", r.code)
	}
	var sawRequested bool
	for _, e := range d.Events {
		sawRequested = sawRequested || e.To == job.CancelRequested
	}
	if !sawRequested {
		t.Errorf("no CancelRequested event: %+v", d.Events)
	}
}

// A command that ignores SIGTERM is killed after the grace period (2s in tests).
func TestCancelKillsAfterGrace(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": "command: trap '' TERM; echo started; while true; do sleep 0.1; done\n"})
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, 30*time.Second, "the job to log", func() bool { return logHas(w, name, "started") })
	w.ok("job", "cancel", "-n", name, "--yes")
	d := w.waitStatus(name, 30*time.Second, job.Canceled, job.Failed)
	if d.Status != job.Canceled || d.ExitCode == nil || *d.ExitCode != 137 {
		t.Fatalf("status %s exit %v, want Canceled with 137 (SIGKILL)", d.Status, d.ExitCode)
	}
}

// limits.timeout stops the job and says so.
func TestTimeout(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": "command: echo start; sleep 60; echo never\nlimits:\n  timeout: 2\n"})
	start := time.Now()
	r := w.run("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	if r.code != 4 {
		t.Fatalf("exit = %d, want 4 (Canceled)\n%s", r.code, r.stderr)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("a 2s timeout took %s", took)
	}
	if strings.Contains(r.stdout, "never") || !strings.Contains(r.stderr, "limits.timeout") {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}

// kill -9 of the server while a run goes on: after a restart the run completes with the right
// status and not one log line is missing.
func TestServerCrashLosesNothing(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	const n = 60
	writeFiles(t, dir, map[string]string{"job.yml": fmt.Sprintf(`command: >-
  for i in $(seq 1 %d); do echo "line $i"; echo "{\"name\":\"i\",\"value\":$i}" >> $HANGAR_METRICS_FILE; sleep 0.1; done;
  echo done > outputs/done.txt
`, n)})
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, 30*time.Second, "the run to log", func() bool { return logHas(w, name, "line 5") })
	w.killServer()
	time.Sleep(2 * time.Second) // the run goes on without a server: lines pile up on the node
	w.startServer()
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("status = %s (%s)", d.Status, d.StatusReason)
	}
	r := w.ok("job", "stream", "-n", name)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != n {
		t.Fatalf("got %d log lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		if l != "line "+strconv.Itoa(i+1) {
			t.Fatalf("line %d = %q", i+1, l)
		}
	}
	if d.Metrics["i"] != n {
		t.Errorf("last metric i = %v, want %d", d.Metrics["i"], n)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--download-path", out)
	if got := readFile(t, filepath.Join(out, name, "artifacts", "outputs", "done.txt")); got != "done\n" {
		t.Errorf("outputs/done.txt = %q", got)
	}
}

// logHas reports whether the job's log so far holds a line containing s.
func logHas(w *ws, name, s string) bool {
	w.t.Helper()
	return strings.Contains(w.logs(name), s)
}
