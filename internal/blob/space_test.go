package blob

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/testdisk"
)

// A full disk is a typed error naming the store's directory, and leaves nothing in tmp.
func TestPutOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	testdisk.Mount(t, dir, 1<<20)
	s, err := Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 2<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	small := []byte("fits")
	tests := []struct {
		name string
		put  func() error
	}{
		{"put", func() error { _, _, err := s.Put(bytes.NewReader(big), hashOf(big)); return err }},
		{"put without a hash", func() error { _, err := s.PutBytes(big); return err }},
		{"bundle", func() error {
			_, _, err := s.PutBundle(bytes.NewReader(bundleOf(t, small, big)))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.put()
			var ns *NoSpaceError
			if !errors.As(err, &ns) || ns.Dir != s.Dir() || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("error = %v (%T), want a NoSpaceError for %s wrapping ENOSPC", err, err, s.Dir())
			}
			if want := "no space left on device: writing blob to " + s.Dir(); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if !IsNoSpace(err) {
				t.Error("IsNoSpace = false")
			}
			tmpEmpty(t, s)
		})
	}
}

// Open removes temp files nobody wrote for an hour (writers that died); younger ones may be in
// use by another process sharing the store. RemoveTemp removes them all.
func TestOpenRemovesStaleTemp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "blobs")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(s.tmp, "put-old")
	fresh := filepath.Join(s.tmp, "put-fresh")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a temp file untouched for 2 hours is still there (stat: %v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temp file was removed: %v", err)
	}
	n, err := s.RemoveTemp()
	if err != nil || n != 1 {
		t.Errorf("RemoveTemp = %d, %v; want 1, nil", n, err)
	}
	tmpEmpty(t, s)
}

func tmpEmpty(t testing.TB, s *Store) {
	t.Helper()
	des, err := os.ReadDir(s.tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		t.Errorf("leftover temp file %s", de.Name())
	}
}
