package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/tick"
)

// Durability. The database is in WAL mode with synchronous=NORMAL: a commit is in the WAL file
// (the kernel has it, so a killed server loses nothing) but is not forced to the disk, so a power
// loss or a kernel crash may undo the last commits, never leaving the database inconsistent.
// What must survive those too is forced after its commit, before the store returns (walSyncer):
// a run's creation, its end, its registered artifacts (the column table, runcolumns.go, says
// which changes of a run; Sync serves the other callers). One fsync of the WAL covers every
// commit before it, so concurrent callers share one (group commit), and nobody holds SQLite's
// write lock while the disk works.
//
// Checkpoints (copying the WAL into the database file: an fsync of each) run once a second from
// one goroutine instead of after commits: under a steady stream of readers SQLite's automatic
// checkpoint could not finish, and every later commit ran it again, fsyncs included (1.9 fsyncs
// per trivial job; BENCHMARKS.md).

const (
	// checkpointEvery is how often the WAL is copied into the database file.
	checkpointEvery = time.Second
	// truncatePages is the WAL size (in 4 KiB pages) from which a checkpoint waits for readers
	// and truncates the WAL: a WAL that readers kept from being reused does not grow forever.
	truncatePages = 16384
	// autoCheckpointPages is SQLite's own checkpoint, left as a backstop far above what the
	// checkpoint goroutine lets the WAL reach.
	autoCheckpointPages = 4 * truncatePages
)

// walSyncer forces a database's WAL to the disk for callers that committed something durable.
type walSyncer struct {
	path string
	// fsync forces a file to the disk (a test counts the calls).
	fsync func(path string) error

	tickets atomic.Uint64 // taken by each caller after its commit
	mu      sync.Mutex    // one fsync at a time; callers queue here and share it
	synced  uint64        // every ticket up to this one is on the disk
}

func newWALSyncer(dbPath string) *walSyncer {
	return &walSyncer{path: dbPath + "-wal", fsync: fsyncFile}
}

// sync returns once everything committed before the call is on the disk.
func (w *walSyncer) sync() error {
	if w == nil {
		return nil // PostgreSQL: a commit is durable once it returns
	}
	ticket := w.tickets.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.synced >= ticket {
		return nil // a sync that started after this caller's commit covered it
	}
	upTo := w.tickets.Load()
	if err := w.fsync(w.path); err != nil {
		return fmt.Errorf("sync the database's log: %w", err)
	}
	w.synced = upTo
	return nil
}

// fsyncFile forces a file's data to the disk. Any descriptor of the file will do: fsync writes
// back the file, not what was written through the descriptor. A WAL that is not there has been
// checkpointed into the database file and removed, which synced it.
func fsyncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Sync makes every transaction committed so far survive a power loss. The store's own durable
// writes call it already; a caller that is about to acknowledge another write calls it first.
func (s *Store) Sync(ctx context.Context) error { return s.sync(ctx) }

// sync is Sync for the aggregates' durable writes.
func (s *base) sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.wal.sync()
}

// checkpoints copies the WAL into the database file every checkpointEvery until stop is closed.
func (s *Store) checkpoints(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick.Every(stop, checkpointEvery, func() {
		// A failed checkpoint is retried at the next tick; SQLite's own is the backstop.
		_ = s.checkpoint(context.Background())
	})
}

// checkpoint copies what it can of the WAL into the database file without waiting for anyone
// (nothing is done, and nothing synced, when the WAL holds nothing new); a WAL grown past
// truncatePages is truncated, which waits for its readers.
func (s *Store) checkpoint(ctx context.Context) error {
	if s.dialect.postgres() {
		return ErrNotSQLite
	}
	var busy, pages, done int
	if err := s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &pages, &done); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if pages < truncatePages {
		return nil
	}
	if err := s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &pages, &done); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
