package ssh_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/backend/ssh"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/proc"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
)

// On an attached VM, an ended run's directory goes with its read-only folders and its box
// record, a link in it is not followed, and a run whose supervisor runs keeps its own. The
// directories are listed only on a host the server is connected to.
func TestRunDirsOverSSH(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	key, err := os.ReadFile(srv.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	target := backendtest.Target(t, compute.Spec{Name: "vm", Type: compute.TypeSSH, SSH: &compute.SSHSpec{
		SSHHost: compute.SSHHost{Host: srv.Host, Port: srv.Port, AdminUsername: srv.User, PrivateKey: string(key),
			HostKey: srv.HostKey(), WorkDir: work}}})
	b := &ssh.Backend{ServerURL: func() string { return "http://127.0.0.1:1" }, Exe: backendtest.Binary(t),
		Targets: backendtest.Resolver(target), Log: slog.New(slog.DiscardHandler)}
	runs := filepath.Join(work, "runs")
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "keep"), "k")
	mustWrite(t, filepath.Join(runs, "ended", "inputs", "data", "x.csv"), "x")
	mustWrite(t, filepath.Join(runs, ".box", "ended.json"), "{}")
	if err := os.Symlink(outside, filepath.Join(runs, "ended", "inputs", "data", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(runs, "ended", "inputs", "data"), 0o555); err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(map[string]any{"target": "vm", "proc": proc.Of(os.Getpid()), "dir": filepath.Join(runs, "live")})
	mustWrite(t, filepath.Join(runs, "live", "handle.json"), string(h))

	if ids, _, err := b.RunDirsOn(t.Context(), target); err != nil || ids != nil {
		t.Errorf("before any connection: RunDirsOn = %v, %v; want nothing", ids, err)
	}
	if err := b.RemoveRunDirOn(t.Context(), target, "ended"); err != nil {
		t.Fatalf("remove an ended run's directory: %v", err)
	}
	for _, p := range []string{filepath.Join(runs, "ended"), filepath.Join(runs, ".box", "ended.json")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(got) != "k" {
		t.Errorf("the folder a link named outside lost its file: %q, %v", got, err)
	}
	if err := b.RemoveRunDirOn(t.Context(), target, "live"); !errors.Is(err, ssh.ErrRunLive) {
		t.Errorf("remove a live run's directory: %v, want ErrRunLive", err)
	}
	ids, private, err := b.RunDirsOn(t.Context(), target)
	if err != nil || private {
		t.Fatalf("RunDirsOn = %v, private %v, %v", ids, private, err)
	}
	if diff := cmp.Diff([]string{"live"}, ids); diff != "" {
		t.Errorf("run directories (-want +got):\n%s", diff)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
