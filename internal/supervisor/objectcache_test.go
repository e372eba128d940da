package supervisor

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/objstore"
)

// After a download the supervisor prunes the node's object cache (cache/objects, beside the blob
// cache) to the limit its config sets, least recently used first; a negative limit keeps all.
func TestPruneObjectCacheToTheConfiguredLimit(t *testing.T) {
	for _, tt := range []struct {
		limit int64
		left  []string
	}{
		{150, []string{"new"}},
		{-1, []string{"new", "old"}},
	} {
		root := t.TempDir()
		s := &Supervisor{cfg: api.SupervisorConfig{CacheDir: filepath.Join(root, "cache", "blobs"), ObjectCacheBytes: tt.limit},
			log: slog.New(slog.DiscardHandler)}
		dir := s.objectCacheDir()
		if dir != filepath.Join(root, "cache", "objects") {
			t.Fatalf("object cache at %s", dir)
		}
		for name, ago := range map[string]time.Duration{"old": 2 * time.Hour, "new": time.Hour} {
			p := filepath.Join(dir, "objects", "ab", name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, make([]byte, 100), 0o444); err != nil {
				t.Fatal(err)
			}
			when := time.Now().Add(-ago)
			os.Chtimes(p, when, when)
		}
		s.pruneObjectCache(&objstore.Cache{Dir: dir})
		var left []string
		for _, name := range []string{"new", "old"} {
			if _, err := os.Stat(filepath.Join(dir, "objects", "ab", name)); err == nil {
				left = append(left, name)
			}
		}
		if !slices.Equal(left, tt.left) {
			t.Errorf("limit %d: left %v, want %v", tt.limit, left, tt.left)
		}
	}
}
