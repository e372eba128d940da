package home

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A server started from a binary that was rebuilt since (a new file renamed over the old path)
// is told apart from one running the very file the CLI runs, and from another installation.
func TestReplacedSince(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "hangar")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	if replacedSince(pid, bin) {
		t.Error("the same file is reported replaced")
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if replacedSince(pid, other) {
		t.Error("another installation is reported as a rebuild")
	}
	// A rebuild: go build writes a new file and renames it over the old path.
	next := filepath.Join(dir, "hangar.new")
	if err := os.WriteFile(next, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, bin); err != nil {
		t.Fatal(err)
	}
	if !replacedSince(pid, bin) {
		t.Error("a server running the replaced file is not reported")
	}
}
