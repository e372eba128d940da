package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesWholeWithItsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o640); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new" {
		t.Fatalf("content: got %q, %v; want new", b, err)
	}
	fi, _ := os.Stat(path)
	if got := fi.Mode().Perm(); got != 0o640 {
		t.Fatalf("mode: got %v, want 0640", got)
	}
	onlyFile(t, dir, "f")
}

func TestWriteFailingLeavesTheOldAndNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, 0o600, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err: got %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("content: got %q, want old", b)
	}
	onlyFile(t, dir, "f")
}

func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil || len(es) != 1 || es[0].Name() != name {
		t.Fatalf("folder holds %v (%v), want only %s", es, err, name)
	}
}
