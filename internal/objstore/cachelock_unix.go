//go:build unix

package objstore

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// tryLock takes the lock file's exclusive lock if no other process holds it. The kernel drops
// it when the process dies, so a crashed pruner never blocks the others.
func tryLock(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return func() { f.Close() }, true, nil
}

// filesystemSize is the size in bytes of the filesystem that holds dir (or its nearest parent
// that exists).
func filesystemSize(dir string) (int64, error) {
	var st unix.Statfs_t
	for {
		err := unix.Statfs(dir, &st)
		if err == nil {
			return int64(st.Blocks) * int64(st.Bsize), nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, unix.ENOENT) || parent == dir {
			return 0, err
		}
		dir = parent
	}
}
