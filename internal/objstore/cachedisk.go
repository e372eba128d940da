package objstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Pruned is what a Prune did.
type Pruned struct {
	// Skipped: another process was pruning the same cache; this one left it to it.
	Skipped bool
	// Removed files and their bytes; Kept bytes stay.
	Removed      int
	RemovedBytes int64
	Kept         int64
}

// DefaultCacheShare is the share of its filesystem's size the object cache is pruned to when no
// limit is set (see CacheLimit).
const DefaultCacheShare = 10

// CacheLimit is the limit a node's object cache in dir is pruned to: set when set (negative: no
// limit), else DefaultCacheShare percent of the size of the filesystem that holds dir.
func CacheLimit(dir string, set int64) int64 {
	if set != 0 {
		return set
	}
	size, err := filesystemSize(dir)
	if err != nil || size <= 0 {
		return 10 << 30 // the filesystem cannot say its size: 10 GiB
	}
	return size / 100 * DefaultCacheShare
}

// Prune removes the least recently used objects until the cache holds at most limit bytes
// (negative: no limit), keeping those used in the last minute, and what downloads that died left
// half-written. Several processes may prune and download at once: one prunes at a time (a lock
// file, cache/prune.lock; the others skip), and a download copies from the entry it opened, so
// an entry removed meanwhile only costs a later run a fetch.
func (c *Cache) Prune(limit int64) (Pruned, error) {
	return c.prune(pruneRule{Limit: limit, Busy: defaultPruneRule.Busy, StaleTemp: defaultPruneRule.StaleTemp}, time.Now())
}

func (c *Cache) prune(r pruneRule, now time.Time) (Pruned, error) {
	var p Pruned
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return p, fmt.Errorf("object cache %s: %w", c.Dir, err)
	}
	unlock, ok, err := tryLock(filepath.Join(c.Dir, "prune.lock"))
	if err != nil {
		return p, fmt.Errorf("object cache %s: lock: %w", c.Dir, err)
	}
	if !ok {
		p.Skipped = true
		return p, nil
	}
	defer unlock()
	files, err := c.files()
	if err != nil {
		return p, fmt.Errorf("object cache %s: %w", c.Dir, err)
	}
	for _, f := range files {
		p.Kept += f.Size
	}
	for _, f := range choose(files, r, now) {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return p, fmt.Errorf("object cache: remove %s: %w", f.Path, err)
		}
		p.Removed++
		p.RemovedBytes += f.Size
		p.Kept -= f.Size
	}
	return p, nil
}

// files lists the cache's entries and half-written objects.
func (c *Cache) files() ([]cached, error) {
	var out []cached
	for _, sub := range []string{"objects", "tmp"} {
		err := filepath.WalkDir(filepath.Join(c.Dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // not made yet, or removed by another process meanwhile
				}
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			} else if err != nil {
				return err
			}
			out = append(out, cached{Path: p, Size: fi.Size(), Used: fi.ModTime(), Temp: sub == "tmp"})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// open opens the entry when it holds the whole object (nil when not), and marks it used now.
func (c *Cache) open(entry string, size int64) *os.File {
	f, err := os.Open(entry)
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		f.Close()
		return nil
	}
	now := time.Now()
	os.Chtimes(entry, now, now) // best effort: a cache another user made stays readable
	return f
}
