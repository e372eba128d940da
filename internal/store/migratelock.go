package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/pressly/goose/v3/lock"
)

// fileLocker serialises the migrations of one SQLite database across connections and
// processes: goose reads what is applied before its transaction begins, so two servers
// starting together on a new file would both apply 0001. It holds an exclusive flock on a file
// beside the database (<path>-migrate.lock), never on the database file itself: SQLite's own
// POSIX locks would be dropped when another descriptor of that file is closed.
type fileLocker struct {
	path string
	f    *os.File
}

var _ lock.SessionLocker = (*fileLocker)(nil)

func newFileLocker(dbPath string) *fileLocker { return &fileLocker{path: dbPath + "-migrate.lock"} }

// SessionLock waits for the lock, polling, until ctx ends.
func (l *fileLocker) SessionLock(ctx context.Context, _ *sql.Conn) error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open the migration lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			l.f = f
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return fmt.Errorf("lock %s: %w", l.path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return fmt.Errorf("wait for %s: %w", l.path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// SessionUnlock releases the lock (closing the file does).
func (l *fileLocker) SessionUnlock(context.Context, *sql.Conn) error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
