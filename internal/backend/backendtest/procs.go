package backendtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hangar-ml/hangar/internal/node"
)

// The defaults for engines that run supervisors on this machine (local, sshd and the Slurm test
// cluster here): they find a run's processes in /proc.

// LocalSupervisors lists the `hangar supervise` processes of a run on this machine (found by
// the run's config path, <dir>/runs/<id>/supervisor.json, on their command line; wrapping shells
// are not supervisors).
func LocalSupervisors(runID string) []int {
	cfg := "/runs/" + runID + "/supervisor.json"
	var out []int
	for _, pid := range node.PIDs() {
		argv := cmdline(pid)
		if len(argv) >= 4 && argv[1] == "supervise" && slicesContains(argv, cfg) {
			out = append(out, pid)
		}
	}
	return out
}

func slicesContains(argv []string, suffix string) bool {
	for _, a := range argv {
		if strings.HasSuffix(a, suffix) {
			return true
		}
	}
	return false
}

// KillLocalSupervisor kills a run's supervisors on this machine with SIGKILL, leaving the run's
// command running, as a crash or the OOM killer would.
func KillLocalSupervisor(t testing.TB, runID string) {
	t.Helper()
	pids := LocalSupervisors(runID)
	if len(pids) == 0 {
		t.Fatalf("no supervisor of run %s runs on this machine", runID)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill supervisor %d of run %s: %v", pid, runID, err)
		}
	}
}

// LocalProcesses lists the processes of this machine whose command line holds marker ("pid:
// command line"), other than this test and its ancestors.
func LocalProcesses(marker string) []string {
	self := node.Ancestry()
	var out []string
	for _, pid := range node.PIDs() {
		if self[pid] {
			continue
		}
		argv := cmdline(pid)
		if line := strings.Join(argv, " "); strings.Contains(line, marker) {
			if st, ok := node.Stat(pid); ok && st.Running() {
				out = append(out, fmt.Sprintf("%d: %s", pid, line))
			}
		}
	}
	return out
}

// killLocal kills what LocalProcesses lists (the end of a test).
func killLocal(marker string) {
	for _, p := range LocalProcesses(marker) {
		pid, _ := strconv.Atoi(p[:strings.IndexByte(p, ':')])
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func cmdline(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
}

var binary struct {
	once      sync.Once
	path, dir string
	err       error
}

// Main runs a harness package's tests (call it from TestMain) and removes the binary Binary built.
func Main(m *testing.M) int {
	code := m.Run()
	for _, dir := range []string{binary.dir, static.dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	return code
}

// Binary is the hangar binary the backends start as supervisors, built once per test binary from
// this module (HANGAR_TEST_BINARY names one already built), into a temporary directory that Main
// removes.
func Binary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		if p := os.Getenv("HANGAR_TEST_BINARY"); p != "" {
			binary.path = p
			return
		}
		dir, err := os.MkdirTemp("", "hangar-backendtest-")
		if err != nil {
			binary.err = err
			return
		}
		binary.dir, binary.path = dir, filepath.Join(dir, "hangar")
		cmd := exec.Command("go", "build", "-o", binary.path, "github.com/hangar-ml/hangar/cmd/hangar")
		if out, err := cmd.CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build hangar: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

func killPID(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
