package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// syncCalls are the system calls that force data to disk.
const syncCalls = "fsync,fdatasync,syncfs,sync_file_range,msync"

// SyncCount is what a traced stretch of the server's life forced to disk: the sync calls of the
// server's own threads and of the processes it started (supervisors and what they run), by
// what they synced (see syncTarget).
type SyncCount struct {
	Server, Children map[string]int
}

// Total is the number of sync calls in counts.
func Total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// CountSyncs runs fn while `strace -f` watches the server for sync calls, and splits them into
// the server's own and its children's: a line's thread is the server's when it is one of the
// server's threads afterwards (a Go program keeps its threads).
func CountSyncs(ctx context.Context, pid int, dir string, fn func() error) (SyncCount, error) {
	if _, err := exec.LookPath("strace"); err != nil {
		return SyncCount{}, fmt.Errorf("-syncs counts with strace, which is not installed (Debian: apt-get install strace): %w", err)
	}
	out := filepath.Join(dir, "strace.out")
	cmd := exec.CommandContext(ctx, "strace", "-f", "-qq", "-y", "-e", "trace="+syncCalls, "-e", "signal=none",
		"-o", out, "-p", strconv.Itoa(pid))
	if err := cmd.Start(); err != nil {
		return SyncCount{}, fmt.Errorf("strace: %w", err)
	}
	stop := func() { _ = cmd.Process.Signal(syscall.SIGINT); _ = cmd.Wait() }
	if err := waitTraced(pid); err != nil {
		stop()
		return SyncCount{}, err
	}
	err := fn()
	stop()
	if err != nil {
		return SyncCount{}, err
	}
	return countSyncLines(out, pid)
}

// waitTraced waits until every thread of pid has a tracer.
func waitTraced(pid int) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tids, err := threads(pid)
		if err != nil {
			return err
		}
		all := true
		for tid := range tids {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
			if err != nil || strings.Contains(string(b), "TracerPid:\t0\n") {
				all = false
			}
		}
		if all {
			return nil
		}
	}
	return fmt.Errorf("strace did not attach to %d within 10 s (is ptrace allowed?)", pid)
}

func threads(pid int) (map[int]bool, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	out := map[int]bool{}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out[tid] = true
		}
	}
	return out, nil
}

// countSyncLines reads strace's output (each line starts with the thread id under -f).
func countSyncLines(path string, pid int) (SyncCount, error) {
	mine, err := threads(pid)
	if err != nil {
		return SyncCount{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return SyncCount{}, err
	}
	defer f.Close()
	c := SyncCount{Server: map[string]int{}, Children: map[string]int{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		tidText, call, ok := strings.Cut(sc.Text(), " ")
		tid, err := strconv.Atoi(tidText)
		if !ok || err != nil || !strings.Contains(call, "(") || strings.HasPrefix(call, "<...") {
			// exits, signals, and the second half of a call another thread interrupted
			continue
		}
		if mine[tid] {
			c.Server[syncTarget(call)]++
		} else {
			c.Children[syncTarget(call)]++
		}
	}
	return c, sc.Err()
}

// syncTarget names what a traced call synced, from the path strace -y prints for its descriptor.
func syncTarget(call string) string {
	_, path, _ := strings.Cut(call, "<")
	path, _, _ = strings.Cut(path, ">")
	switch {
	case strings.HasSuffix(path, " ...") || path == "":
		// "fsync(5 <unfinished ...>": a call strace caught as it attached or detached, or
		// one whose descriptor it could not name
		return "unnamed (strace printed no path)"
	case strings.HasSuffix(path, ".db-wal"):
		return "database log (WAL)"
	case strings.HasSuffix(path, ".db"):
		return "database file"
	case strings.Contains(path, "/cache/blobs/"):
		return "node blob cache"
	case strings.Contains(path, "/blobs/"):
		return "workspace blob store"
	case strings.Contains(path, "/runs/"):
		return "run directory"
	default:
		return "other (" + filepath.Base(path) + ")"
	}
}
