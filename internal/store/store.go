package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed migrations/*.sql
var migrations embed.FS

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// Store is the workspace database.
type Store struct {
	db  *sql.DB
	wal *walSyncer
	// stop ends the checkpoint goroutine, which closes stopped.
	stop, stopped chan struct{}
	closeOnce     sync.Once
	// logs commits the MLflow API's log-batches together (tracking_log.go).
	logs logQueue
}

// Open opens (creating if needed) the SQLite database at path in WAL mode and applies migrations.
// A file that is not a whole SQLite database gives a *DamagedError.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	conn, err := newCachingConnector(dsn(path, "_txlock=immediate"+
		"&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)"+
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"+
		fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)", autoCheckpointPages)))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := sql.OpenDB(conn)
	// Every connection is kept: opening one reads the schema again, and each keeps its
	// prepared statements (stmtcache.go).
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	s := &Store{db: db, wal: newWALSyncer(path), stop: make(chan struct{}), stopped: make(chan struct{})}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		if d := asDamaged(path, err); d != err {
			return nil, d
		}
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	go s.checkpoints(s.stop, s.stopped)
	return s, nil
}

// Close stops the checkpoints and closes the database (SQLite checkpoints the WAL then).
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.stopped
	})
	return s.db.Close()
}

// migrate applies every embedded migration newer than the recorded schema version, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx,
		`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: name must start with its number", base)
		}
		if err := s.applyMigration(ctx, v, name); err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, version int, name string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	body, err := migrations.ReadFile(name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
		version, time.Now().UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}

// SchemaVersion is the newest applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	return int(v.Int64), err
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func optNanos(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixNano()
}

func optTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}

// isUniqueViolation reports whether err is SQLite refusing a duplicate key.
func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
