package parallel

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

// The driver's tests run the embedded driver with Debian's python3, as the supervisor does: the
// driver written to a file, the code folder as working directory, the settings and this node's
// place in the environment.

func python(t *testing.T) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("python3 not found")
			}
			t.Skip("python3 not found")
		}
	}
	return py
}

// script is an entry script whose behaviour each file's name picks: ok* rows, bad* raises,
// once-* raises (or crashes, or hangs) on its first attempt only, remembered by a marker file.
const script = `import os, sys, time

def init():
    if os.environ.get("FAIL_INIT"):
        1 / 0
    global args
    args = sys.argv[1:]

class Frame:  # what the driver needs of a pandas DataFrame
    columns = ["file", "size"]
    def __init__(self, rows):
        self.rows = rows
    def itertuples(self, index=True, name="Pandas"):
        return iter(self.rows)

def first_time(name):
    marker = "marker-" + name
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True

def run(mini_batch):
    names = [os.path.basename(p) for p in mini_batch]
    for n in names:
        if n.startswith("bad"):
            raise ValueError("cannot score " + n)
        if n.startswith("once-raise") and first_time(n):
            raise RuntimeError("flaky " + n)
        if n.startswith("once-crash") and first_time(n):
            os._exit(3)
        if n.startswith("once-hang") and first_time(n):
            time.sleep(60)
    if os.environ.get("FRAME"):
        return Frame([(n, len(n)) for n in names])
    return [" ".join(args) + " " + n for n in names]
`

type driverRun struct {
	code     int
	log      string
	reason   string
	rowsDir  string
	dataDir  string
	workDir  string
	settings job.ParallelRun
}

// runDriver runs the driver over files named in data (rank of nodes) and returns what it left.
func runDriver(t *testing.T, data []string, p job.ParallelRun, rank, nodes int, env ...string) driverRun {
	t.Helper()
	py := python(t)
	root := t.TempDir()
	r := driverRun{rowsDir: filepath.Join(root, "rows"), dataDir: filepath.Join(root, "data"), workDir: filepath.Join(root, "code"), settings: p}
	for _, d := range []string{r.rowsDir, r.dataDir, r.workDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range data {
		if err := os.WriteFile(filepath.Join(r.dataDir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	drv := filepath.Join(root, FileName)
	reason := filepath.Join(root, "reason.txt")
	for path, b := range map[string][]byte{drv: Driver(), filepath.Join(r.workDir, "score.py"): []byte(script)} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settings, _ := json.Marshal(p)
	args := []string{drv, "--input-data", r.dataDir}
	if p.AppendRowTo != "" {
		args = append(args, "--append-row-to", filepath.Join(r.rowsDir, p.AppendRowTo))
	}
	args = append(args, "--", "--tag", "x")
	cmd := exec.CommandContext(t.Context(), py, args...)
	cmd.Dir = r.workDir
	cmd.Env = append(os.Environ(), "HANGAR_PARALLEL_SETTINGS="+string(settings), "HANGAR_PARALLEL_REASON_FILE="+reason,
		fmt.Sprintf("HANGAR_PARALLEL_NODE_RANK=%d", rank), fmt.Sprintf("HANGAR_PARALLEL_NODE_COUNT=%d", nodes))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	r.log = string(out)
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(reason); err == nil {
		r.reason = string(b)
	}
	return r
}

func (r driverRun) rows(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.rowsDir, name))
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, r.log)
	}
	return string(b)
}

func settings(edit func(*job.ParallelRun)) job.ParallelRun {
	p := job.ParallelRun{EntryScript: "score.py", AppendRowTo: ".", MiniBatchSize: 2, MaxConcurrencyPerInstance: 2,
		MiniBatchErrorThreshold: -1, ErrorThreshold: -1, MaxRetries: 3, TimeoutSeconds: 30, LoggingLevel: "INFO"}
	if edit != nil {
		edit(&p)
	}
	return p
}

func TestDriverRowsInFileOrderAfterRetries(t *testing.T) {
	data := []string{"ok1", "once-raise", "ok3", "once-crash", "ok5", "ok6", "ok7"}
	r := runDriver(t, data, settings(nil), 0, 1)
	if r.code != 0 {
		t.Fatalf("exit %d, log:\n%s", r.code, r.log)
	}
	want := "--tag x ok1\n--tag x ok3\n--tag x ok5\n--tag x ok6\n--tag x ok7\n--tag x once-crash\n--tag x once-raise\n"
	if got := r.rows(t, "parallel_run_step.txt"); got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range []string{
		"(RuntimeError: flaky once-raise); retrying",
		"(the worker process exited with code 3); retrying",
		"node 0 progress: 4/4 mini-batches done, 0 failed, 2 retried",
		"4 mini-batches: 4 succeeded, 0 failed (0 files), 2 retried; 7 rows written to parallel_run_step.txt",
	} {
		if !strings.Contains(r.log, line) {
			t.Errorf("log lacks %q:\n%s", line, r.log)
		}
	}
}

// A mini-batch past retry_settings.timeout has its worker killed and replaced, and is retried.
func TestDriverTimeoutKillsAndRetries(t *testing.T) {
	r := runDriver(t, []string{"ok1", "once-hang"}, settings(func(p *job.ParallelRun) { p.TimeoutSeconds = 1 }), 0, 1)
	if r.code != 0 {
		t.Fatalf("exit %d, log:\n%s", r.code, r.log)
	}
	if !strings.Contains(r.log, "ran past retry_settings.timeout (1s): killing worker") ||
		!strings.Contains(r.log, "(timed out after 1s (retry_settings.timeout)); retrying") {
		t.Errorf("log lacks the timeout and the retry:\n%s", r.log)
	}
	if got := r.rows(t, "parallel_run_step.txt"); got != "--tag x ok1\n--tag x once-hang\n" {
		t.Errorf("rows = %q", got)
	}
}

func TestDriverThresholds(t *testing.T) {
	data := []string{"bad1", "bad2", "bad3", "ok4", "ok5", "ok6"}
	tests := []struct {
		name   string
		edit   func(*job.ParallelRun)
		code   int
		reason string
		log    string
	}{
		{"unlimited: the job completes with its failures counted", func(p *job.ParallelRun) { p.MaxRetries = 0 }, 0, "",
			"3 mini-batches: 1 succeeded, 2 failed (4 files), 0 retried; 2 rows written"},
		{"mini_batch_error_threshold", func(p *job.ParallelRun) { p.MaxRetries, p.MiniBatchErrorThreshold = 1, 1 }, 1,
			"2 failed mini-batches exceed mini_batch_error_threshold 1; last error: mini-batch 1 (bad3): ValueError: cannot score bad3",
			"mini-batch 1 failed 2 times; giving up on its 2 files"},
		{"error_threshold counts files", func(p *job.ParallelRun) { p.MaxRetries, p.ErrorThreshold = 0, 1 }, 1,
			"2 failed files exceed error_threshold 1; last error: mini-batch 0 (bad1): ValueError: cannot score bad1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runDriver(t, data, settings(func(p *job.ParallelRun) { p.MaxConcurrencyPerInstance = 1; tt.edit(p) }), 0, 1)
			if r.code != tt.code || r.reason != tt.reason {
				t.Errorf("exit %d reason %q\nwant exit %d reason %q\nlog:\n%s", r.code, r.reason, tt.code, tt.reason, r.log)
			}
			if !strings.Contains(r.log, tt.log) {
				t.Errorf("log lacks %q:\n%s", tt.log, r.log)
			}
		})
	}
}

func TestDriverInitFailureFailsTheJob(t *testing.T) {
	r := runDriver(t, []string{"ok1"}, settings(nil), 0, 1, "FAIL_INIT=1")
	if r.code != 1 || r.reason != "the entry script's init() failed: ZeroDivisionError: division by zero" {
		t.Errorf("exit %d reason %q\nlog:\n%s", r.code, r.reason, r.log)
	}
}

// Node 1 of 2 takes the odd mini-batches and writes its own row file.
func TestDriverNodeTakesItsShare(t *testing.T) {
	data := []string{"ok0", "ok1", "ok2", "ok3", "ok4", "ok5", "ok6", "ok7", "ok8"}
	r := runDriver(t, data, settings(nil), 1, 2)
	if r.code != 0 {
		t.Fatalf("exit %d, log:\n%s", r.code, r.log)
	}
	if got := r.rows(t, "parallel_run_step_1.txt"); got != "--tag x ok2\n--tag x ok3\n--tag x ok6\n--tag x ok7\n" {
		t.Errorf("rows = %q", got)
	}
	if !strings.Contains(r.log, "node 1 of 2: 9 files in 5 mini-batches of up to 2, this node takes 2") {
		t.Errorf("log lacks the node's share:\n%s", r.log)
	}
}

func TestDriverOutputs(t *testing.T) {
	t.Run("a uri_file output gets the rows; DataFrame rows are space-separated", func(t *testing.T) {
		r := runDriver(t, []string{"ok1", "ok22"}, settings(func(p *job.ParallelRun) { p.AppendRowTo = "scores.csv" }), 0, 1, "FRAME=1")
		if got := r.rows(t, "scores.csv"); got != "ok1 3\nok22 4\n" {
			t.Errorf("rows = %q, log:\n%s", got, r.log)
		}
	})
	t.Run("summary_only writes no rows", func(t *testing.T) {
		r := runDriver(t, []string{"ok1"}, settings(func(p *job.ParallelRun) { p.AppendRowTo = "" }), 0, 1)
		entries, _ := os.ReadDir(r.rowsDir)
		if r.code != 0 || len(entries) != 0 {
			t.Errorf("exit %d, files %v, log:\n%s", r.code, entries, r.log)
		}
	})
	t.Run("an empty folder completes with an empty row file", func(t *testing.T) {
		r := runDriver(t, nil, settings(nil), 0, 1)
		if got := r.rows(t, "parallel_run_step.txt"); r.code != 0 || got != "" {
			t.Errorf("exit %d rows %q, log:\n%s", r.code, got, r.log)
		}
	})
}
