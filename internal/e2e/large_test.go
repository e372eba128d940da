package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A 1 GB code tree goes through: no size cap, streamed end to end. Skipped with -short.
func TestLargeTree1GB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and sends 1 GB")
	}
	w := newWS(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	var bigHash string
	for i := 0; i < 3; i++ {
		h := writeRandom(t, filepath.Join(src, "weights", fmt.Sprintf("shard%d.bin", i)), 300<<20)
		if i == 2 {
			bigHash = h
		}
	}
	for i := 0; i < 1000; i++ {
		writeRandom(t, filepath.Join(src, "data", fmt.Sprintf("d%02d", i/100), fmt.Sprintf("s%04d.bin", i)), 100<<10)
	}
	writeFiles(t, dir, map[string]string{"job.yml": `command: >-
  echo files=$(find . -type f | wc -l) bytes=$(du -sb --apparent-size . | cut -f1);
  sha256sum weights/shard2.bin
code: src
`})
	r := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	if !strings.Contains(r.stdout, "files=1003 bytes=") || !strings.Contains(r.stdout, bigHash) {
		t.Errorf("the run saw %q, want 1003 files and shard2 hashing to %s", r.stdout, bigHash)
	}
	if !strings.Contains(r.stderr, "Uploaded code: 1003 files (1.0 GB)") {
		t.Errorf("upload summary: %q", r.stderr)
	}
}

// writeRandom writes size random bytes to path and returns their SHA-256.
func writeRandom(t *testing.T, path string, size int64) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.Reader, size); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
