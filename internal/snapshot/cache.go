package snapshot

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/atomicfile"
)

// fileKey is what must be unchanged for a cached hash to be trusted.
type fileKey struct {
	Size  int64  `json:"s"`
	Mtime int64  `json:"m"` // ns
	Ctime int64  `json:"c,omitempty"`
	Ino   uint64 `json:"i,omitempty"`
	Dev   uint64 `json:"d,omitempty"`
}

type cacheEntry struct {
	fileKey
	Hash string `json:"h"`
}

type cacheFile struct {
	Version int                   `json:"version"`
	Entries map[string]cacheEntry `json:"entries"`
}

const (
	cacheVersion = 1
	// maxCacheEntries bounds the file: past it, Save keeps only the paths
	// used since the cache was opened.
	maxCacheEntries = 1 << 20
)

// HashCache remembers file hashes by absolute path, size, mtime, ctime,
// inode and device, so an unchanged file is not read again. It is safe for
// concurrent use.
type HashCache struct {
	path    string
	mu      sync.Mutex
	entries map[string]cacheEntry
	used    map[string]bool
	dirty   bool
}

// OpenHashCache loads the cache stored at path. A missing, unreadable or
// corrupt file gives an empty cache; the file is written by Save.
func OpenHashCache(path string) (*HashCache, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open hash cache: %w", err)
	}
	c := &HashCache{path: abs, entries: map[string]cacheEntry{}, used: map[string]bool{}}
	data, err := os.ReadFile(abs)
	if err != nil {
		return c, nil
	}
	var f cacheFile
	if json.Unmarshal(data, &f) == nil && f.Version == cacheVersion && f.Entries != nil {
		c.entries = f.Entries
	}
	return c, nil
}

func (c *HashCache) lookup(path string, k fileKey) (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[path]
	if !ok || e.fileKey != k {
		return "", false
	}
	c.used[path] = true
	return e.Hash, true
}

func (c *HashCache) store(path string, k fileKey, hash string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[path] = cacheEntry{fileKey: k, Hash: hash}
	c.used[path] = true
	c.dirty = true
}

// racy reports whether a file with key k, hashed from start on, could have
// changed afterwards without changing its key: its timestamps are too close
// to start for the file system's clock granularity to tell.
func racy(k fileKey, start time.Time) bool {
	limit := start.UnixNano()
	for _, ts := range []int64{k.Mtime, k.Ctime} {
		grain := int64(50 * time.Millisecond)
		if ts%int64(time.Second) == 0 {
			grain = int64(2 * time.Second) // whole seconds: a coarse file system
		}
		if ts+grain >= limit {
			return true
		}
	}
	return false
}

// Save writes the cache atomically (a temp file renamed over the old one).
func (c *HashCache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	f := cacheFile{Version: cacheVersion, Entries: c.entries}
	if len(c.entries) > maxCacheEntries {
		f.Entries = make(map[string]cacheEntry, len(c.used))
		for p := range c.used {
			f.Entries[p] = c.entries[p]
		}
	}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("save hash cache: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("save hash cache: %w", err)
	}
	if err := atomicfile.WriteFile(c.path, data, 0o600); err != nil {
		return fmt.Errorf("save hash cache: %w", err)
	}
	c.dirty = false
	return nil
}
