package objstore

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// Cache is a node's cache of downloaded objects: one read-only file per object version, named by
// a hash of the store's identity (type, endpoint, account, container), the key and the version
// (the ETag, or GCS's generation). A run that reads the same objects again fetches nothing; an
// object that changed in the store has another version and is fetched anew. Several processes
// may share a Dir: entries are written beside it and renamed into place whole. Prune bounds it
// (cachedisk.go).
type Cache struct {
	Dir string
}

// entry is where an object version lies in the cache; "" when it has no version to key it by.
func (c *Cache) entry(loc datastore.Location, key, version string) string {
	if c == nil || c.Dir == "" || version == "" {
		return ""
	}
	h := sha256.New()
	for _, s := range []string{loc.Type, strings.TrimRight(loc.Endpoint, "/"), loc.Account, loc.Container, key, version} {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return filepath.Join(c.Dir, "objects", sum[:2], sum)
}

// temp is a new file in the cache's scratch folder, to fill and then commit.
func (c *Cache) temp() (*os.File, error) {
	dir := filepath.Join(c.Dir, "tmp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, "obj-*")
}

// commit moves a filled temp file to its entry, read-only.
func (c *Cache) commit(tmp, entry string) error {
	if err := os.Chmod(tmp, 0o444); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, entry)
}

func randomName() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
