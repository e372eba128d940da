package local

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hangar-ml/hangar/internal/blob"
)

// TrimCache removes from this machine's node cache the blobs that the workspace's own store
// (BlobDir, on this machine) holds too and that are older than cutoff, and says how many and
// how many bytes. A local run's collected outputs pass through the node cache on their way to
// the store, and would otherwise stay on the disk twice; local runs read code and inputs from
// the store itself. A blob the store lacks (outputs waiting for an absent server) stays, and so
// does one a supervisor asked for since cutoff (blob.Store.Has refreshes its time). Without a
// BlobDir (an agent's backend) the cache is left alone.
func (b *Backend) TrimCache(ctx context.Context, cutoff time.Time) (n int, bytes int64, err error) {
	if b.BlobDir == "" {
		return 0, 0, nil
	}
	cache, err := blob.Open(filepath.Join(b.Root, "cache", "blobs"))
	if err != nil {
		return 0, 0, fmt.Errorf("trim the node cache: %w", err)
	}
	store, err := blob.Open(b.BlobDir)
	if err != nil {
		return 0, 0, fmt.Errorf("trim the node cache: %w", err)
	}
	var old []string
	err = cache.Walk(func(i blob.Info) error {
		if !i.ModTime.After(cutoff) {
			old = append(old, i.Hash)
		}
		return ctx.Err()
	})
	if err != nil {
		return 0, 0, fmt.Errorf("trim the node cache: %w", err)
	}
	for _, h := range old {
		if _, err := store.Stat(h); err != nil {
			continue // not in the workspace's store (yet): the cache's copy is the only one
		}
		removed, size, err := cache.RemoveIfOlder(h, cutoff)
		if err != nil {
			return n, bytes, fmt.Errorf("trim the node cache: %w", err)
		}
		if removed {
			n, bytes = n+1, bytes+size
		}
	}
	return n, bytes, nil
}
