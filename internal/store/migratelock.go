package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile waits, polling until ctx ends, for an exclusive flock on path (created if needed)
// and returns what releases it.
//
// It serialises the migrations of one SQLite database across connections and processes: goose
// reads what is applied before its transaction begins, and a new file's first connections race
// to switch it to WAL, so two servers starting together on a new file could both apply 0001 or
// be refused with SQLITE_BUSY. The lock is a file beside the database (<path>-migrate.lock),
// never the database file itself: SQLite's own POSIX locks would be dropped when another
// descriptor of that file is closed.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the migration lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for %s: %w", path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
