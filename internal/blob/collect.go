package blob

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The collector (the workspace's garbage collection of blobs nothing references) and the store
// agree through a blob's modification time: it is when the blob was last written or said to be
// stored (Has, Missing), and the collector removes only blobs older than its grace. A blob the
// server just told a client it has is therefore kept while that client names it in a job, and
// Remove makes sure a blob said to be stored while it was being removed stays.

// touchAfter is how stale a blob's time may be before Has refreshes it: a grace must be longer.
const touchAfter = time.Minute

// MinGrace is the shortest grace that protects every blob Has said was stored (shorter ones,
// for tests, may remove a blob a client was just told of).
const MinGrace = 2 * touchAfter

// touch refreshes the time of the blob at p (found with fi) when it is older than touchAfter,
// and reports whether the blob is still there: false when it was removed meanwhile (the caller
// must then treat it as missing). A store it cannot write (a node reading the server's) keeps
// its time: only the server's store is collected, by the server.
func touch(p string, fi fs.FileInfo) bool {
	now := time.Now()
	if now.Sub(fi.ModTime()) < touchAfter {
		return true
	}
	if err := os.Chtimes(p, now, now); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	// The new time may have reached a blob the collector had already moved aside and judged by
	// its old time: the blob counts as stored only if it is still in place after the change.
	_, err := os.Lstat(p)
	return err == nil
}

// Info describes a stored blob.
type Info struct {
	Hash    string
	Size    int64
	ModTime time.Time
}

// Walk calls fn for every stored blob (not the temp files), in no particular order. A blob
// removed during the walk may be left out.
func (s *Store) Walk(fn func(Info) error) error {
	dirs, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue // tmp/, and anything that is no blob folder
		}
		des, err := os.ReadDir(filepath.Join(s.dir, d.Name()))
		if err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		for _, de := range des {
			if !ValidHash(de.Name()) || de.Name()[:2] != d.Name() || !de.Type().IsRegular() {
				continue
			}
			fi, err := de.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("list blobs: %w", err)
			}
			if err := fn(Info{Hash: de.Name(), Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
				return err
			}
		}
	}
	return nil
}

// RemoveIfOlder removes the blob if its time is not after cutoff, and reports whether it did
// and its size. The blob is first moved aside, and put back if it was said to be stored (Has
// refreshed its time) before it went: a client told it exists never finds it gone.
func (s *Store) RemoveIfOlder(hash string, cutoff time.Time) (removed bool, size int64, err error) {
	p := s.Path(hash)
	if p == "" {
		return false, 0, fmt.Errorf("remove blob %q: %w", hash, ErrInvalidHash)
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil || fi.ModTime().After(cutoff) {
		return false, 0, err
	}
	aside := filepath.Join(s.tmp, "gc-"+rand.Text())
	if err := os.Rename(p, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, 0, nil
		}
		return false, 0, fmt.Errorf("remove blob %s: %w", hash, err)
	}
	if fi, err = os.Lstat(aside); err != nil || fi.ModTime().After(cutoff) {
		// Said to be stored between the check and the move (or unreadable): it stays.
		if err := os.Rename(aside, p); err != nil {
			return false, 0, fmt.Errorf("put back blob %s: %w", hash, err)
		}
		return false, 0, nil
	}
	if err := os.Remove(aside); err != nil {
		return false, 0, fmt.Errorf("remove blob %s: %w", hash, err)
	}
	return true, fi.Size(), nil
}
