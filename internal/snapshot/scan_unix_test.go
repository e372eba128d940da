//go:build unix

package snapshot

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanSkipsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "x"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _, st := mustScan(t, dir, ScanOptions{})
	if diff := cmp.Diff([]string{"a"}, paths(m)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if st.Ignored != 1 {
		t.Errorf("Ignored = %d, want 1", st.Ignored)
	}
}
