package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testdisk"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// A run that fills its node's disk fails saying so; once the user deletes that job, its run
// directory is gone, the space is back, and the next job runs. The run directories are kept an
// hour here (--keep-run-dirs), so it is the delete that frees them. Before, run directories were
// never removed, job delete included: the disk stayed full, and every later job failed, until
// someone deleted files by hand.
func TestFaultDiskFullRecoversOnceTheJobIsDeleted(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "local")
	const size = 8 << 20
	testdisk.Mount(t, node, size)
	w := newWSAtArgs(t, dir, "--keep-run-dirs", "1h")
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"fill.yml": "command: head -c 20000000 /dev/urandom > outputs/fill.bin\n",
		"next.yml": "command: echo the next job ran > outputs/ok.txt && echo ok\n",
	})
	filler := w.create(filepath.Join(src, "fill.yml"))
	d := w.waitStatus(filler, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Failed || !strings.HasPrefix(d.StatusReason, "no space left on device: ") {
		t.Fatalf("the run that filled the disk ended %s (%q), want Failed saying the disk is full", d.Status, d.StatusReason)
	}
	fillReason, full := d.StatusReason, freeBytes(t, node)

	start := time.Now()
	w.ok("job", "delete", filler, "--yes")
	if _, err := os.Stat(filepath.Join(node, "runs", filler)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted job's run directory is still there (%v)", err)
	}
	freed := freeBytes(t, node) - full
	if freed < size/2 {
		t.Errorf("job delete freed %d bytes of the node's %d, want most of them", freed, size)
	}
	next := w.create(filepath.Join(src, "next.yml"))
	d = w.waitStatus(next, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("the next job ended %s (%q), want Completed", d.Status, d.StatusReason)
	}
	took := time.Since(start)
	out := t.TempDir()
	w.ok("job", "download", next, "--download-path", out)
	if got := readFile(t, filepath.Join(out, next, "artifacts", "outputs", "ok.txt")); got != "the next job ran\n" {
		t.Errorf("the next job's output reads %q", got)
	}
	reportFault(t, faultRow{Target: "local", Injected: "a run fills the node's disk; the user deletes that job and submits the next",
		Runs: 2, Final: fmt.Sprintf("Failed, then the next job Completed %s after the delete; the delete freed %d of %d MiB",
			took.Round(100*time.Millisecond), freed>>20, size>>20),
		Reason: strings.ReplaceAll(fillReason, dir, "<home>")})
}

// An ended run's directory goes by itself once kept --keep-run-dirs: the node's disk does not
// hold every run twice (its directory and the workspace's blobs).
func TestRunDirRemovedOnceKept(t *testing.T) {
	w := newWS(t, "--keep-run-dirs", "2s")
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"job.yml": "command: echo kept > outputs/a.txt\n"})
	name := w.create(filepath.Join(src, "job.yml"))
	w.waitStatus(name, 2*time.Minute, job.Completed)
	runDir := filepath.Join(w.home, "local", "runs", name)
	testwait.Within(t, time.Minute, "the ended run's directory to be removed", func() bool {
		_, err := os.Stat(runDir)
		return errors.Is(err, os.ErrNotExist)
	})
	out := t.TempDir()
	w.ok("job", "download", name, "--download-path", out)
	if got := readFile(t, filepath.Join(out, name, "artifacts", "outputs", "a.txt")); got != "kept\n" {
		t.Errorf("the run's output, downloaded after its directory went, reads %q", got)
	}
}

// newWSAtArgs is newWSAt with more server flags.
func newWSAtArgs(t testing.TB, dir string, args ...string) *ws {
	t.Helper()
	w := &ws{t: t, home: dir, serverArgs: append([]string{"--cancel-grace", "2s", "--heartbeat", "1s"}, args...)}
	w.startServer()
	t.Cleanup(w.cleanup)
	return w
}

// freeBytes is what unprivileged users may still write on the file system of path.
func freeBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}
