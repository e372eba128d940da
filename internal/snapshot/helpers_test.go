package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/blob"
)

// writeTree creates files under dir. A key ending in "/" is a directory; a
// value starting with "-> " makes a symlink; anything else is file content.
func writeTree(t testing.TB, dir string, tree map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(tree))
	for k := range tree {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(k, "/")))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		v := tree[k]
		var err error
		switch {
		case strings.HasSuffix(k, "/"):
			err = os.MkdirAll(p, 0o755)
		case strings.HasPrefix(v, "-> "):
			err = os.Symlink(strings.TrimPrefix(v, "-> "), p)
		default:
			err = os.WriteFile(p, []byte(v), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// paths lists a manifest's paths, directories with a trailing "/".
func paths(m *Manifest) []string {
	out := []string{}
	for _, e := range m.Entries {
		p := e.Path
		if e.Type == TypeDir {
			p += "/"
		}
		out = append(out, p)
	}
	return out
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// later is a clock an hour ahead, so files just written count as settled
// for the hash cache.
func later() time.Time { return time.Now().Add(time.Hour) }

// mapSource serves blobs from memory; unknown hashes yield "unknown".
type mapSource map[string]string

func (m mapSource) Open(_ context.Context, hash string) (io.ReadCloser, error) {
	s, ok := m[hash]
	if !ok {
		s = "unknown"
	}
	return io.NopCloser(strings.NewReader(s)), nil
}

func sourceOf(contents ...string) mapSource {
	m := mapSource{}
	for _, c := range contents {
		m[sha(c)] = c
	}
	return m
}

func newStore(t testing.TB) *blob.Store {
	t.Helper()
	s, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// upload sends a scanned tree's missing blobs to store in one bundle.
func upload(t testing.TB, store *blob.Store, m *Manifest, local map[string]string) {
	t.Helper()
	sizes := map[string]int64{}
	for _, e := range m.Files() {
		sizes[e.Hash] = e.Size
	}
	var items []blob.BundleItem
	for _, h := range store.Missing(m.Hashes()) {
		p := local[h]
		items = append(items, blob.BundleItem{Hash: h, Size: sizes[h], Open: func() (io.ReadCloser, error) { return os.Open(p) }})
	}
	var buf bytes.Buffer
	if err := blob.WriteBundle(&buf, items); err != nil {
		t.Fatal(err)
	}
	if n, _, err := store.PutBundle(&buf); err != nil || n != len(items) {
		t.Fatalf("PutBundle = %d, %v; want %d", n, err, len(items))
	}
	if missing := store.Missing(m.Hashes()); len(missing) != 0 {
		t.Fatalf("still missing after upload: %v", missing)
	}
}

func mustScan(t testing.TB, dir string, opts ScanOptions) (*Manifest, map[string]string, Stats) {
	t.Helper()
	m, local, st, err := Scan(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, local, st
}

func mustEncode(t testing.TB, m *Manifest) ([]byte, string) {
	t.Helper()
	data, h, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data, h
}
