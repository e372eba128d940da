package snapshot

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRoundTrip sends a tree the way a job submission does (Scan, bundles,
// PutBundle) and materializes it on the other side.
func TestRoundTrip(t *testing.T) {
	src := modeTree(t)
	writeTree(t, src, map[string]string{
		".gitignore": "*.ckpt\n", "model.ckpt": "big", ".git/HEAD": "ref", "sub/.amlignore": "/cache\n",
		"sub/cache/x": "x", "sub/keep.py": "print()", "large.bin": string(make([]byte, 3<<20)),
	})
	m, local, st := mustScan(t, src, ScanOptions{})
	store := newStore(t)
	upload(t, store, m, local)
	// A second upload finds nothing missing.
	if missing := store.Missing(m.Hashes()); len(missing) != 0 {
		t.Fatalf("missing after upload: %v", missing)
	}
	data, h := mustEncode(t, m)
	if mh, err := store.PutBytes(data); err != nil || mh != h {
		t.Fatalf("manifest blob = %s, %v; want %s", mh, err, h)
	}

	// The other side: fetch the manifest by hash, then the tree.
	f, err := store.Open(h)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "wd")
	if err := Materialize(t.Context(), got, StoreSource{store}, dest, MaterializeOptions{}); err != nil {
		t.Fatal(err)
	}
	again, _, st2 := mustScan(t, dest, ScanOptions{})
	if diff := cmp.Diff(m, again); diff != "" {
		t.Fatalf("materialized tree (-want +got):\n%s", diff)
	}
	if st2.Files != st.Files || st2.Bytes != st.Bytes {
		t.Fatalf("stats differ: %+v vs %+v", st, st2)
	}
	for _, p := range []string{"model.ckpt", ".git", "sub/cache"} {
		if _, err := os.Lstat(filepath.Join(dest, p)); err == nil {
			t.Errorf("ignored %s was materialized", p)
		}
	}
}

func TestFromDir(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"metrics.json": "{}", ".git/x": "kept", "__pycache__/y": "kept", ".gitignore": "*\n", "ckpt/a": "a", "l": "-> ckpt/a",
	})
	store := newStore(t)
	m, err := FromDir(t.Context(), dir, store)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".git/", ".git/x", ".gitignore", "__pycache__/", "__pycache__/y", "ckpt/", "ckpt/a", "l", "metrics.json"}
	if diff := cmp.Diff(want, paths(m)); diff != "" {
		t.Fatalf("paths (-want +got):\n%s", diff)
	}
	for _, e := range m.Files() {
		if size, err := store.Stat(e.Hash); err != nil || size != e.Size {
			t.Errorf("%s: blob %s: %d, %v", e.Path, e.Hash, size, err)
		}
	}
}
