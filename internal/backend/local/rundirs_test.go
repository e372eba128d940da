package local

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/proc"
	"github.com/hangar-ml/hangar/internal/runbox"
)

// A run's directory goes with everything in it, read-only and unreadable folders included, and
// with its box record; a link in it is removed, never followed. A run whose supervisor runs
// keeps its directory.
func TestRemoveRunDir(t *testing.T) {
	b := newBackend(t, quitter)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("k"), 0o444); err != nil {
		t.Fatal(err)
	}
	ended := b.RunDir("ended")
	for _, d := range []string{"wd/outputs", "inputs/data/sub", "closed/inner"} {
		if err := os.MkdirAll(filepath.Join(ended, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"wd/outputs/model.bin", "inputs/data/sub/x.csv", "closed/inner/f"} {
		if err := os.WriteFile(filepath.Join(ended, f), []byte("x"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{"wd/outputs/out", "inputs/data/out"} {
		if err := os.Symlink(outside, filepath.Join(ended, l)); err != nil {
			t.Fatal(err)
		}
	}
	for d, mode := range map[string]os.FileMode{"inputs/data/sub": 0o555, "inputs/data": 0o555, "closed/inner": 0o000, "closed": 0o100} {
		if err := os.Chmod(filepath.Join(ended, d), mode); err != nil {
			t.Fatal(err)
		}
	}
	writeHandle(t, ended, proc.Proc{PID: 1 << 30}) // no such process
	live := b.RunDir("live")
	writeHandle(t, live, proc.Of(os.Getpid()))
	for _, dir := range []string{ended, live} {
		if err := os.MkdirAll(filepath.Dir(runbox.RecordPath(dir)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(runbox.RecordPath(dir), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ids, err := b.RunDirs()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ended", "live"}, ids); diff != "" {
		t.Errorf("RunDirs (-want +got):\n%s", diff)
	}
	if err := b.RemoveRunDir(t.Context(), "ended"); err != nil {
		t.Fatalf("remove an ended run's directory: %v", err)
	}
	for _, p := range []string{ended, runbox.RecordPath(ended)} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	if got := readFile(t, filepath.Join(outside, "keep")); got != "k" {
		t.Errorf("the folder a link named outside was changed: keep reads %q", got)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() == 0o700 {
		t.Errorf("the folder a link named outside had its mode changed: %v, %v", fi.Mode(), err)
	}

	if err := b.RemoveRunDir(t.Context(), "live"); !errors.Is(err, ErrRunLive) {
		t.Errorf("remove a live run's directory: %v, want ErrRunLive", err)
	}
	if _, err := os.Stat(filepath.Join(live, "handle.json")); err != nil {
		t.Errorf("a live run's directory was touched: %v", err)
	}
	if err := b.RemoveRunDir(t.Context(), "never-was"); err != nil {
		t.Errorf("remove a directory that does not exist: %v", err)
	}
	for _, bad := range []string{"", ".box", "..", "a/b"} {
		if err := b.RemoveRunDir(t.Context(), bad); err == nil {
			t.Errorf("RemoveRunDir(%q) was accepted", bad)
		}
	}
}

// A run directory that is a link (never made by Hangar) is removed as a link: the folder it
// names keeps its files.
func TestRemoveTreeOfALink(t *testing.T) {
	target := t.TempDir()
	if err := os.WriteFile(filepath.Join(target, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := RemoveTree(link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link is still there (%v)", err)
	}
	if got := readFile(t, filepath.Join(target, "f")); got != "x" {
		t.Errorf("the linked folder's file reads %q", got)
	}
}

func writeHandle(t *testing.T, dir string, p proc.Proc) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, "handle.json"), handle{Proc: p, Dir: dir}, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A job deleted as soon as it ended: its supervisor wrote the result and is exiting; the
// removal waits for it rather than leave the directory.
func TestRemoveRunDirWaitsForAnEndingSupervisor(t *testing.T) {
	b := newBackend(t, quitter)
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	dir := b.RunDir("ending")
	writeHandle(t, dir, proc.Of(cmd.Process.Pid))
	if err := os.WriteFile(filepath.Join(dir, ResultFile), []byte(`{"state":"Failed","reason":"x","time":"2026-11-25T00:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveRunDir(t.Context(), "ending"); err != nil {
		t.Fatalf("remove the directory of a supervisor that is exiting: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory is still there (%v)", err)
	}
}

// The node cache of the server's machine loses the blobs the workspace's store holds too once
// they are old; a blob only the cache holds, or a young one, stays.
func TestTrimCache(t *testing.T) {
	b := newBackend(t, quitter)
	b.BlobDir = filepath.Join(t.TempDir(), "blobs")
	cache, err := blob.Open(filepath.Join(b.Root, "cache", "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := blob.Open(b.BlobDir)
	if err != nil {
		t.Fatal(err)
	}
	put := func(s *blob.Store, content string, ago time.Duration) string {
		h, err := s.PutBytes([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-ago)
		if err := os.Chtimes(s.Path(h), at, at); err != nil {
			t.Fatal(err)
		}
		return h
	}
	twice := put(cache, "uploaded output", 2*time.Hour)
	put(store, "uploaded output", 2*time.Hour)
	only := put(cache, "output the server does not have yet", 2*time.Hour)
	young := put(cache, "just collected", 0)
	put(store, "just collected", 0)

	n, bytes, err := b.TrimCache(t.Context(), time.Now().Add(-time.Hour))
	if err != nil || n != 1 || bytes != int64(len("uploaded output")) {
		t.Errorf("TrimCache = %d, %d, %v; want the one old duplicate", n, bytes, err)
	}
	for h, want := range map[string]bool{twice: false, only: true, young: true} {
		if _, err := cache.Stat(h); (err == nil) != want {
			t.Errorf("cache blob %s…: stored %v, want %v", h[:8], err == nil, want)
		}
	}
}
