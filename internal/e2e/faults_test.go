package e2e

// The fault suite (`make faults`; RELIABILITY.md): each TestFault* injects one fault while runs are
// live and then reads what the user gets (the stored log through `job stream`, the downloaded
// std_log.txt, the metric history, the final state and its reason). Each reports a row of the
// fault matrix to $HANGAR_FAULTS_REPORT (JSON lines); cmd/hangar-faults turns them into the table.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// faultRow is one line of the fault matrix.
type faultRow struct {
	Target   string `json:"target"`
	Injected string `json:"injected"`
	Runs     int    `json:"runs"`
	// Lines and Metrics are what the runs produced; the Lost counts are those missing (or
	// doubled) in what the user gets afterwards.
	Lines       int    `json:"lines,omitempty"`
	LinesLost   int    `json:"lines_lost"`
	Metrics     int    `json:"metrics,omitempty"`
	MetricsLost int    `json:"metrics_lost"`
	Leftover    int    `json:"leftover_processes"`
	Final       string `json:"final"`
	Reason      string `json:"reason,omitempty"`
	Test        string `json:"test"`
}

var reportMu sync.Mutex

// reportFault records a row of the fault matrix (and logs it).
func reportFault(t testing.TB, row faultRow) {
	t.Helper()
	row.Test = t.Name()
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fault: %s", b)
	path := os.Getenv("HANGAR_FAULTS_REPORT")
	if path == "" {
		return
	}
	reportMu.Lock()
	defer reportMu.Unlock()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// chatty is a command printing n numbered lines and logging the metric i = 1..n, one every pause
// (a shell duration such as 0.1), then writing outputs/done.txt.
func chatty(n int, pause string) string {
	return fmt.Sprintf(`for i in $(seq 1 %d); do echo "line $i"; echo "{\"name\":\"i\",\"value\":$i,\"step\":$i}" >> "$HANGAR_METRICS_FILE"; sleep %s; done; echo done > outputs/done.txt`, n, pause)
}

// losses counts what is missing (or doubled) of a chatty run's n lines and metrics in what the
// user gets: the log `job stream` prints, the std_log.txt `job download` brings, and the metric
// history. The stored log and the downloaded one must agree.
func losses(t *testing.T, w *ws, name string, n int) (lines, metrics int) {
	t.Helper()
	stream := w.ok("job", "stream", "-n", name).stdout
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--all", "--download-path", out)
	file, _ := os.ReadFile(filepath.Join(out, name, "artifacts", "user_logs", "std_log.txt"))
	lines = max(missing(stream, n), missing(string(file), n))
	resp, err := w.client().Jobs.Metrics(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float64]int{}
	for _, m := range resp.Metrics {
		if m.Name == "i" {
			seen[m.Value]++
		}
	}
	for i := 1; i <= n; i++ {
		if seen[float64(i)] != 1 {
			metrics++
		}
	}
	return lines, metrics
}

// missing counts the lines "line 1".."line n" not found exactly once, in order, in log.
func missing(log string, n int) int {
	count := map[string]int{}
	for _, l := range strings.Split(log, "\n") {
		count[strings.TrimSpace(l)]++
	}
	lost := 0
	for i := 1; i <= n; i++ {
		if count["line "+strconv.Itoa(i)] != 1 {
			lost++
		}
	}
	return lost
}

// supervisorOf finds the supervisor process of a run on this machine (every target's nodes are on
// it in tests) and the run's directory on its node, from its command line.
func supervisorOf(t *testing.T, name string) (pid int, runDir string) {
	t.Helper()
	testwait.Within(t, 60*time.Second, "the supervisor of "+name, func() bool {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
			for i, a := range args {
				if a == "--config" && i+1 < len(args) && i > 0 && args[i-1] == "supervise" &&
					filepath.Base(filepath.Dir(args[i+1])) == name {
					pid, _ = strconv.Atoi(filepath.Base(filepath.Dir(p)))
					runDir = filepath.Dir(args[i+1])
					return true
				}
			}
		}
		return false
	})
	return pid, runDir
}

// states summarizes the final states of runs, e.g. "10 Completed".
func states(ds map[string]job.State) string {
	count := map[job.State]int{}
	for _, s := range ds {
		count[s]++
	}
	var parts []string
	for _, s := range []job.State{job.Completed, job.Failed, job.Canceled} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	return strings.Join(parts, ", ")
}

// sharedDir is a folder every target's runs may write (SSH runs are another user).
// runsSee is a temporary directory the runs of a test can read, whoever they run as (a test's
// temporary directories are 0700 root's, and on a root server runs are nobody's): for gate files a
// job waits for.
func runsSee(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(filepath.Dir(d), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func sharedDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(d, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(d), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// kill9 kills a process as a crash would, and waits until it is gone.
func kill9(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
	testwait.Within(t, 10*time.Second, fmt.Sprintf("process %d to die", pid), func() bool { return !processAlive(pid) })
}
