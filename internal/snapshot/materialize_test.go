package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hangar-ml/hangar/internal/blob"
)

// modeTree builds a tree with varied modes and symlinks and returns it.
func modeTree(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"run.sh": "#!/bin/sh\necho hi\n", "secret": "s", "empty": "", "ro/f": "frozen", "private/": "",
		"deep/a/b/c.txt": "c", "link": "-> run.sh", "dirlink": "-> deep/a", "dangling": "-> missing",
		"deep/a/up": "-> ../../secret",
	})
	for p, mode := range map[string]os.FileMode{"run.sh": 0o755, "secret": 0o600, "private": 0o700, "ro": 0o555} {
		if err := os.Chmod(filepath.Join(dir, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestMaterializeRoundTrip(t *testing.T) {
	src := modeTree(t)
	store := newStore(t)
	m, err := FromDir(t.Context(), src, store)
	if err != nil {
		t.Fatal(err)
	}
	for _, readOnly := range []bool{false, true} {
		dest := filepath.Join(t.TempDir(), "new", "dest")
		opts := MaterializeOptions{ReadOnly: readOnly, Parallel: 3}
		if err := Materialize(t.Context(), m, StoreSource{store}, dest, opts); err != nil {
			t.Fatal(err)
		}
		got, _, _ := mustScan(t, dest, ScanOptions{IgnoreFiles: []string{}, DefaultIgnores: []string{}})
		want := m
		if readOnly {
			want = &Manifest{Entries: append([]Entry(nil), m.Entries...)}
			for i, e := range want.Entries {
				if e.Type == TypeFile {
					want.Entries[i].Mode &^= 0o222
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadOnly=%v: materialized tree (-want +got):\n%s", readOnly, diff)
		}
	}
}

func TestMaterializeReplacesExisting(t *testing.T) {
	outside := t.TempDir()
	dest := t.TempDir()
	writeTree(t, dest, map[string]string{
		"was-dir/x": "old", "was-file": "old", "was-link": "-> " + outside, "through/": "",
		"keep": "untouched", "f": "old content",
	})
	if err := os.Remove(filepath.Join(dest, "through")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dest, "through")); err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Entries: []Entry{
		{Path: "f", Type: TypeFile, Hash: sha("new"), Size: 3, Mode: 0o644},
		{Path: "through", Type: TypeDir, Mode: 0o755},
		{Path: "through/f", Type: TypeFile, Hash: sha("new"), Size: 3, Mode: 0o644},
		{Path: "was-dir", Type: TypeFile, Hash: sha("new"), Size: 3, Mode: 0o644},
		{Path: "was-file", Type: TypeDir, Mode: 0o755},
		{Path: "was-file/g", Type: TypeFile, Hash: sha("new"), Size: 3, Mode: 0o644},
		{Path: "was-link", Type: TypeFile, Hash: sha("new"), Size: 3, Mode: 0o644},
	}}
	if err := Materialize(t.Context(), m, sourceOf("new"), dest, MaterializeOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := mustScan(t, dest, ScanOptions{})
	want := append([]Entry{{Path: "keep", Type: TypeFile, Hash: sha("untouched"), Size: 9, Mode: 0o644}}, m.Entries...)
	sortEntries(want)
	if diff := cmp.Diff(want, got.Entries); diff != "" {
		t.Errorf("dest (-want +got):\n%s", diff)
	}
	assertEmpty(t, outside)
}

func assertEmpty(t testing.TB, dir string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(des) != 0 {
		t.Fatalf("%s is not empty: %v", dir, des)
	}
}

func TestMaterializeHostile(t *testing.T) {
	h := sha("x")
	file := func(p string) Entry { return Entry{Path: p, Type: TypeFile, Hash: h, Size: 1, Mode: 0o644} }
	link := func(p, target string) Entry { return Entry{Path: p, Type: TypeSymlink, Mode: 0o777, Target: target} }
	dir := func(p string) Entry { return Entry{Path: p, Type: TypeDir, Mode: 0o755} }
	tests := []struct {
		name    string
		entries func(outside string) []Entry
	}{
		{"parent path", func(string) []Entry { return []Entry{file("../evil")} }},
		{"nested parent path", func(string) []Entry { return []Entry{dir("a"), file("a/../../evil")} }},
		{"absolute path", func(o string) []Entry { return []Entry{file(filepath.ToSlash(filepath.Join(o, "evil")))} }},
		{"file through absolute symlink", func(o string) []Entry { return []Entry{link("l", o), file("l/evil")} }},
		{"file through relative symlink", func(string) []Entry { return []Entry{link("l", "../outside"), file("l/evil")} }},
		{"dir through symlink", func(string) []Entry { return []Entry{link("l", "../outside"), dir("l/d")} }},
		{"symlink to parent", func(string) []Entry { return []Entry{link("l", "..")} }},
		{"symlink climbing out", func(string) []Entry { return []Entry{dir("a"), link("a/l", "../../outside/x")} }},
		{"absolute symlink", func(string) []Entry { return []Entry{link("l", "/etc/passwd")} }},
		{"symlink chain", func(string) []Entry { return []Entry{link("a", "."), link("x", "a/..")} }},
		{"symlink chain deep", func(string) []Entry { return []Entry{dir("d"), link("d/up", ".."), link("x", "d/up/d/up/..")} }},
		{"symlink loop", func(string) []Entry { return []Entry{link("a", "b"), link("b", "a")} }},
		{"duplicate file", func(string) []Entry { return []Entry{file("f"), file("f")} }},
		{"duplicate file and symlink", func(string) []Entry { return []Entry{file("f"), link("f", "../outside/f")} }},
		{"setuid", func(string) []Entry { e := file("f"); e.Mode = 0o4755; return []Entry{e} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			outside, dest := filepath.Join(base, "outside"), filepath.Join(base, "dest")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			m := &Manifest{Entries: tt.entries(outside)}
			err := Materialize(t.Context(), m, sourceOf("x"), dest, MaterializeOptions{})
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Materialize = %v, want ErrInvalid", err)
			}
			assertEmpty(t, outside)
			if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("dest was created for a refused manifest")
			}
			if data, _, err := m.Encode(); err == nil {
				if _, err := Decode(data); err == nil && !strings.Contains(tt.name, "symlink") {
					t.Errorf("Decode accepted it")
				}
			}
		})
	}
}

func TestMaterializeBadContent(t *testing.T) {
	dest := t.TempDir()
	writeTree(t, dest, map[string]string{"f": "previous"})
	m := &Manifest{Entries: []Entry{{Path: "f", Type: TypeFile, Hash: sha("x"), Size: 1, Mode: 0o644}}}
	tests := []struct {
		name string
		src  mapSource
	}{
		{"wrong content", mapSource{sha("x"): "y"}},
		{"too long", mapSource{sha("x"): "xx"}},
		{"too short", mapSource{sha("x"): ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Materialize(t.Context(), m, tt.src, dest, MaterializeOptions{})
			if !errors.Is(err, blob.ErrHashMismatch) {
				t.Fatalf("Materialize = %v, want ErrHashMismatch", err)
			}
			got, _, _ := mustScan(t, dest, ScanOptions{})
			if diff := cmp.Diff([]string{"f"}, paths(got)); diff != "" || got.Entries[0].Hash != sha("previous") {
				t.Fatalf("dest changed or temp file left (-want +got):\n%s", diff)
			}
		})
	}
	store := newStore(t)
	if err := Materialize(t.Context(), m, StoreSource{store}, dest, MaterializeOptions{}); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("missing blob: Materialize = %v, want ErrNotFound", err)
	}
}

func TestMaterializeReplacesSymlinkedParents(t *testing.T) {
	base := t.TempDir()
	outside, dest := filepath.Join(base, "outside"), filepath.Join(base, "dest")
	writeTree(t, base, map[string]string{"outside/": "", "dest/l": "-> ../outside", "dest/m": "-> ../outside"})
	m := &Manifest{Entries: []Entry{
		{Path: "l/f", Type: TypeFile, Hash: sha("x"), Size: 1, Mode: 0o644},
		{Path: "m/sub/f", Type: TypeFile, Hash: sha("x"), Size: 1, Mode: 0o644},
	}}
	if err := Materialize(t.Context(), m, sourceOf("x"), dest, MaterializeOptions{}); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, outside)
	got, _, _ := mustScan(t, dest, ScanOptions{})
	if diff := cmp.Diff([]string{"l/", "l/f", "m/", "m/sub/", "m/sub/f"}, paths(got)); diff != "" {
		t.Errorf("dest (-want +got):\n%s", diff)
	}
}
