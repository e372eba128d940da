package objstore_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hangar-ml/hangar/internal/objstore"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
)

// Two downloaders of the same folder through one cache, and a pruner emptying it all the while
// (as separate supervisors of a node would: nothing shared but the folder): every download is
// whole and right, and once they are done a prune leaves the cache within its limit.
func TestDownloadsWhileAPrunerEmptiesTheCache(t *testing.T) {
	s := objtest.S3(t)
	c := s.NewContainer(t)
	want := map[string]string{}
	for i := range 12 {
		rel := fmt.Sprintf("f%02d.bin", i)
		b := random(t, 64<<10+i)
		objtest.PutBytes(t, s, c, "ds/"+rel, b)
		want[rel] = string(b)
	}
	cacheDir := t.TempDir()
	b := open(t, s.Location(c, "ds"), s.Credentials())

	done := make(chan struct{})
	var pruned sync.WaitGroup
	pruned.Add(1)
	removed := 0
	go func() {
		defer pruned.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			p, err := objstore.PruneEverything(&objstore.Cache{Dir: cacheDir})
			if err != nil {
				t.Errorf("prune: %v", err)
				return
			}
			removed += p.Removed
		}
	}()
	var wg sync.WaitGroup
	for d := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				dest := filepath.Join(t.TempDir(), fmt.Sprintf("run-%d-%d", d, i))
				_, err := b.Download(t.Context(), dest, objstore.DownloadOptions{Cache: &objstore.Cache{Dir: cacheDir}, ReadOnly: true})
				if err != nil {
					t.Errorf("downloader %d, run %d: %v", d, i, err)
					return
				}
				if got := tree(t, dest); !maps.Equal(got, want) {
					t.Errorf("downloader %d, run %d: got files %v, want %v", d, i, keys(got), keys(want))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	pruned.Wait()
	if removed == 0 {
		t.Error("the pruner never removed anything while the downloads ran")
	}

	// Cached again in full, then bounded: the least recently used go, the limit holds.
	cache := &objstore.Cache{Dir: cacheDir}
	if _, err := b.Download(t.Context(), filepath.Join(t.TempDir(), "last"), objstore.DownloadOptions{Cache: cache}); err != nil {
		t.Fatal(err)
	}
	p, err := objstore.PruneEverything(cache)
	if err != nil || p.Kept != 0 {
		t.Fatalf("prune to nothing: %+v, %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "objects")); err != nil {
		t.Errorf("the cache's folder went with its entries: %v", err)
	}
	again, err := b.Download(t.Context(), filepath.Join(t.TempDir(), "after"), objstore.DownloadOptions{Cache: cache})
	if err != nil || again.Fetched != 12 {
		t.Errorf("after the prune: %+v, %v; want every object fetched anew", again, err)
	}
	p, err = cache.Prune(1 << 40)
	if err != nil || p.Removed != 0 || p.Kept < 12*64<<10 {
		t.Errorf("a prune under the limit: %+v, %v; want nothing removed", p, err)
	}
}
