// Package testdisk gives tests a small file system that fills up: a tmpfs of a chosen size.
package testdisk

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Mount mounts a tmpfs of size bytes at dir (created if needed) until the test ends. Mounting
// needs root: without it the test is skipped, unless CI is set, where it fails instead.
func Mount(t testing.TB, dir string, size int64) {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "mounting a tmpfs needs root")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		unavailable(t, fmt.Sprintf("mount a tmpfs at %s: %v: %s", dir, err, strings.TrimSpace(string(out))))
	}
	// Lazy: a process of the test that still has a file open there must not fail the cleanup.
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set: this test must run)", why)
	}
	t.Skip(why)
}
