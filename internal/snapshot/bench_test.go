package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// makeTree writes dirs×files files of size bytes each under a temp dir.
func makeTree(b *testing.B, dirs, files, size int) string {
	b.Helper()
	root := b.TempDir()
	content := make([]byte, size)
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range files {
			content[0], content[len(content)/2] = byte(d), byte(f)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.py", f)), content, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

func benchScan(b *testing.B, root string) {
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			_, _, st, err := Scan(b.Context(), root, ScanOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Bytes)
		}
	})
	b.Run("cached", func(b *testing.B) {
		c, err := OpenHashCache(filepath.Join(b.TempDir(), "cache.json"))
		if err != nil {
			b.Fatal(err)
		}
		opts := ScanOptions{Cache: c, now: later}
		if _, _, _, err := Scan(b.Context(), root, opts); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			_, _, st, err := Scan(b.Context(), root, opts)
			if err != nil || st.Hashed != 0 {
				b.Fatalf("hashed %d, err %v", st.Hashed, err)
			}
		}
	})
}

// BenchmarkScan10k scans 10,000 small files in 100 directories.
func BenchmarkScan10k(b *testing.B) {
	benchScan(b, makeTree(b, 100, 100, 2048))
}

// BenchmarkScan1GB scans 16 files of 64 MiB.
func BenchmarkScan1GB(b *testing.B) {
	benchScan(b, makeTree(b, 1, 16, 64<<20))
}
