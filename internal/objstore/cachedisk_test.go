package objstore

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// put writes a file of size bytes under the cache dir, last used ago.
func put(t *testing.T, dir, rel string, size int, ago time.Duration) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o444); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-ago)
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
}

func left(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && d.Name() != "prune.lock" {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	slices.Sort(out)
	return out
}

func TestPruneOnDisk(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "objects/aa/old", 100, 3*time.Hour)
	put(t, dir, "objects/bb/mid", 100, 2*time.Hour)
	put(t, dir, "objects/bb/new", 100, 10*time.Minute)
	put(t, dir, "objects/cc/busy", 500, 5*time.Second)
	put(t, dir, "tmp/obj-dead", 70, 2*time.Hour)
	put(t, dir, "tmp/obj-live", 30, time.Second)
	c := &Cache{Dir: dir}
	p, err := c.Prune(700)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"objects/bb/new", "objects/cc/busy", "tmp/obj-live"}
	if got := left(t, dir); !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
	if p.Removed != 3 || p.RemovedBytes != 270 || p.Kept != 630 || p.Skipped {
		t.Errorf("Prune = %+v, want 3 files, 270 bytes removed, 630 kept", p)
	}

	// A hit marks the entry used: it outlives an older one.
	put(t, dir, "objects/dd/older", 100, time.Hour)
	f := c.open(filepath.Join(dir, "objects/bb/new"), 100)
	if f == nil {
		t.Fatal("open of a whole entry missed")
	}
	f.Close()
	if c.open(filepath.Join(dir, "objects/bb/new"), 99) != nil {
		t.Error("an entry of another size is a hit")
	}
	put(t, dir, "objects/cc/busy", 500, 2*time.Minute)
	if _, err := c.Prune(150); err != nil {
		t.Fatal(err)
	}
	if got := left(t, dir); !slices.Equal(got, []string{"objects/bb/new", "tmp/obj-live"}) {
		t.Errorf("after a hit, left %v, want the entry just used (and the live download's file)", got)
	}
}

func TestPruneSkipsWhileAnotherPrunes(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "objects/aa/old", 100, 3*time.Hour)
	unlock, ok, err := tryLock(filepath.Join(dir, "prune.lock"))
	if err != nil || !ok {
		t.Fatalf("tryLock: %v %v", ok, err)
	}
	p, err := (&Cache{Dir: dir}).Prune(0)
	if err != nil || !p.Skipped || p.Removed != 0 {
		t.Errorf("Prune while another holds the lock = %+v, %v; want skipped", p, err)
	}
	unlock()
	if p, err := (&Cache{Dir: dir}).Prune(0); err != nil || p.Skipped || p.Removed != 1 {
		t.Errorf("Prune once it is free = %+v, %v; want the entry removed", p, err)
	}
}

func TestCacheLimit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "made", "yet")
	size, err := filesystemSize(dir)
	if err != nil || size <= 0 {
		t.Fatalf("filesystemSize = %d, %v", size, err)
	}
	for _, tt := range []struct {
		set, want int64
	}{{0, size / 100 * DefaultCacheShare}, {5 << 30, 5 << 30}, {-1, -1}} {
		if got := CacheLimit(dir, tt.set); got != tt.want {
			t.Errorf("CacheLimit(%d) = %d, want %d", tt.set, got, tt.want)
		}
	}
}
