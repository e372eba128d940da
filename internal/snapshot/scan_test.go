package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestScanEntries(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.txt": "a", "b/c.txt": "hello", "b/same.txt": "a", "empty/": "",
		"link": "-> b/c.txt", "dangling": "-> nowhere", "up": "-> b/../a.txt",
	})
	if err := os.Chmod(filepath.Join(dir, "b/c.txt"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	m, local, st := mustScan(t, dir, ScanOptions{})
	want := []Entry{
		{Path: "a.txt", Type: TypeFile, Hash: sha("a"), Size: 1, Mode: 0o644},
		{Path: "b", Type: TypeDir, Mode: 0o755},
		{Path: "b/c.txt", Type: TypeFile, Hash: sha("hello"), Size: 5, Mode: 0o750},
		{Path: "b/same.txt", Type: TypeFile, Hash: sha("a"), Size: 1, Mode: 0o644},
		{Path: "dangling", Type: TypeSymlink, Mode: 0o777, Target: "nowhere"},
		{Path: "empty", Type: TypeDir, Mode: 0o700},
		{Path: "link", Type: TypeSymlink, Mode: 0o777, Target: "b/c.txt"},
		{Path: "up", Type: TypeSymlink, Mode: 0o777, Target: "b/../a.txt"},
	}
	if diff := cmp.Diff(want, m.Entries); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	wantLocal := map[string]string{sha("a"): filepath.Join(dir, "a.txt"), sha("hello"): filepath.Join(dir, "b/c.txt")}
	if diff := cmp.Diff(wantLocal, local); diff != "" {
		t.Errorf("local paths (-want +got):\n%s", diff)
	}
	wantStats := Stats{Files: 3, Dirs: 2, Symlinks: 3, Bytes: 7, Hashed: 3}
	if diff := cmp.Diff(wantStats, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}

func TestScanErrors(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"f": "x"})
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		root string
	}{
		{"missing root", t.Context(), filepath.Join(dir, "nope")},
		{"root is a file", t.Context(), filepath.Join(dir, "f")},
		{"canceled", canceled, dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, _, err := Scan(tt.ctx, tt.root, ScanOptions{}); err == nil {
				t.Fatal("Scan succeeded")
			}
		})
	}
	if _, _, _, err := Scan(canceled, dir, ScanOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled Scan = %v, want context.Canceled", err)
	}
}

func TestScanDeterministic(t *testing.T) {
	tree := map[string]string{}
	var order []string
	for _, p := range []string{"z", "a", "a.b", "a-b", "a/b", "a/b.c", "m/n/o", "m/n.o", "é/ü"} {
		tree[p+"/f"] = p
		order = append(order, p+"/f")
	}
	// Same content, created in opposite orders, scanned with different
	// parallelism.
	one, two := t.TempDir(), t.TempDir()
	for i := range order {
		writeTree(t, one, map[string]string{order[i]: tree[order[i]]})
		j := len(order) - 1 - i
		writeTree(t, two, map[string]string{order[j]: tree[order[j]]})
	}
	m1, _, _ := mustScan(t, one, ScanOptions{})
	prev := runtime.GOMAXPROCS(1)
	m2, _, _ := mustScan(t, two, ScanOptions{})
	runtime.GOMAXPROCS(prev)
	_, h1 := mustEncode(t, m1)
	_, h2 := mustEncode(t, m2)
	if h1 != h2 {
		t.Fatalf("same tree, different hashes:\n%v\n%v", paths(m1), paths(m2))
	}
	if !slices.IsSortedFunc(m1.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) }) {
		t.Fatal("entries not sorted")
	}
}

func TestHashCache(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "1", "b/c": "22", "b/d": "333"})
	cachePath := filepath.Join(t.TempDir(), "sub", "hashes.json")
	scan := func(now func() time.Time) (*Manifest, Stats) {
		t.Helper()
		c, err := OpenHashCache(cachePath)
		if err != nil {
			t.Fatal(err)
		}
		m, _, st := mustScan(t, dir, ScanOptions{Cache: c, now: now})
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
		return m, st
	}
	// Files written just now are not cached: they could still change
	// within the file system's timestamp granularity.
	settling := func() time.Time { return time.Now().Add(-time.Hour) }
	if _, st := scan(settling); st.Hashed != 3 {
		t.Fatalf("first scan hashed %d files, want 3", st.Hashed)
	}
	if _, st := scan(settling); st.Hashed != 3 {
		t.Fatalf("racy files came from the cache (hashed %d)", st.Hashed)
	}
	m1, st := scan(later)
	if st.Hashed != 3 {
		t.Fatalf("hashed %d files, want 3", st.Hashed)
	}
	m2, st := scan(later)
	if st.Hashed != 0 || st.Files != 3 {
		t.Fatalf("unchanged tree: hashed %d of %d files, want 0", st.Hashed, st.Files)
	}
	if diff := cmp.Diff(m1, m2); diff != "" {
		t.Fatalf("cached manifest differs (-want +got):\n%s", diff)
	}
	// Same size, new content: the key changes, so it is read. (The fake
	// clock claims all is settled, so make the mtime differ for sure.)
	writeTree(t, dir, map[string]string{"b/c": "XY"})
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "b/c"), old, old); err != nil {
		t.Fatal(err)
	}
	m3, st := scan(later)
	if st.Hashed != 1 {
		t.Fatalf("after one change hashed %d files, want 1", st.Hashed)
	}
	if _, changed, _ := Diff(m2, m3); !slices.Equal(changed, []string{"b/c"}) {
		t.Fatalf("changed = %v, want [b/c]", changed)
	}
}

func TestHashCacheCorrupt(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "1"})
	cachePath := filepath.Join(t.TempDir(), "hashes.json")
	for _, content := range []string{"{not json", `{"version":99,"entries":{}}`, ""} {
		if err := os.WriteFile(cachePath, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := OpenHashCache(cachePath)
		if err != nil {
			t.Fatalf("OpenHashCache(%q) = %v", content, err)
		}
		if _, _, st := mustScan(t, dir, ScanOptions{Cache: c, now: later}); st.Hashed != 1 {
			t.Fatalf("hashed %d, want 1", st.Hashed)
		}
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := OpenHashCache(cachePath)
	if _, _, st := mustScan(t, dir, ScanOptions{Cache: c}); st.Hashed != 0 {
		t.Fatalf("saved cache not used: hashed %d", st.Hashed)
	}
}

func TestScanFile(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"data.csv": "x,y\n", "lnk": "-> data.csv", "d/": ""})
	for _, name := range []string{"data.csv", "lnk"} {
		m, local, st, err := ScanFile(t.Context(), filepath.Join(dir, name), ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := []Entry{{Path: name, Type: TypeFile, Hash: sha("x,y\n"), Size: 4, Mode: 0o644}}
		if diff := cmp.Diff(want, m.Entries); diff != "" {
			t.Errorf("%s: entries (-want +got):\n%s", name, diff)
		}
		if local[sha("x,y\n")] == "" || st.Files != 1 || st.Bytes != 4 {
			t.Errorf("%s: local = %v, stats = %+v", name, local, st)
		}
	}
	if _, _, _, err := ScanFile(t.Context(), filepath.Join(dir, "d"), ScanOptions{}); err == nil {
		t.Error("ScanFile accepted a directory")
	}
}

func TestScanRefusesLinksLeavingTheFolder(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		name   string
		tree   map[string]string
		path   string // the link named
		target string
		loop   bool
	}{
		{"absolute", map[string]string{"src/data": "-> /etc/passwd"}, "src/data", "/etc/passwd", false},
		{"absolute directory", map[string]string{"d": "-> " + outside}, "d", outside, false},
		{"climbing out", map[string]string{"a/b/l": "-> ../../../x"}, "a/b/l", "../../../x", false},
		{"the parent", map[string]string{"l": "-> .."}, "l", "..", false},
		{"through a link to a folder outside", map[string]string{"ext": "-> ../ext", "x": "-> ext/f"}, "ext", "../ext", false},
		{"climbing from where a link points", map[string]string{"d/": "", "d/up": "-> ..", "x": "-> d/up/d/up/.."}, "x", "d/up/d/up/..", false},
		{"loop", map[string]string{"a": "-> b", "b": "-> a"}, "a", "b", true},
		{"self", map[string]string{"me": "-> me/x"}, "me", "me/x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.tree)
			_, _, _, err := Scan(t.Context(), dir, ScanOptions{})
			var le *LinkError
			if !errors.As(err, &le) {
				t.Fatalf("Scan = %v, want a LinkError", err)
			}
			if le.Path != tt.path || le.Target != tt.target || le.Loop != tt.loop {
				t.Errorf("LinkError %+v, want %s -> %s (loop %v)", le, tt.path, tt.target, tt.loop)
			}
			if !strings.Contains(err.Error(), tt.path+" -> "+tt.target) {
				t.Errorf("error %q does not name the link and its target", err)
			}
		})
	}
}

func TestScanAbsoluteLinkInsideTheFolder(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"f": "x", "abs": "-> " + filepath.Join(dir, "f")})
	_, _, _, err := Scan(t.Context(), dir, ScanOptions{})
	var le *LinkError
	if !errors.As(err, &le) || !le.AbsoluteInside || !strings.Contains(le.Problem("code folder"), "make it relative") {
		t.Fatalf("Scan = %v (%+v), want a LinkError asking for a relative link", err, le)
	}
}

func TestScanKeepsLinksInsideTheFolder(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"data/real.txt": "x", "src/link": "-> ../data/real.txt", "d": "-> data", "via": "-> d/real.txt",
		"dangling": "-> not/there", "dot": "-> .",
		// Ignored entries are not sent, so where they point does not matter.
		".git/hooks/l": "-> /etc", ".venv/bin/python": "-> /usr/bin/python3",
	})
	m, _, _, err := Scan(t.Context(), dir, ScanOptions{})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	var links []string
	for _, e := range m.Entries {
		if e.Type == TypeSymlink {
			links = append(links, e.Path)
		}
	}
	if diff := cmp.Diff([]string{"d", "dangling", "dot", "src/link", "via"}, links); diff != "" {
		t.Errorf("links recorded (-want +got):\n%s", diff)
	}
}
