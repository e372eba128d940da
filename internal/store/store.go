package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// base is what every aggregate shares of the store: the database, its dialect and, on SQLite,
// the syncer that makes commits durable.
type base struct {
	db      *sql.DB
	dialect dialect
	// wal forces SQLite's WAL to the disk; nil on PostgreSQL, whose commits are durable.
	wal *walSyncer
}

// Store is the workspace database.
type Store struct {
	*base
	dsn string // what Open was given: the SQLite file's path or the PostgreSQL URL
	// stop ends the checkpoint goroutine, which closes stopped.
	stop, stopped chan struct{}
	closeOnce     sync.Once

	// The aggregates (nouns.go).
	RunWrites *RunWrites
	Runs      *Runs
	Parents   *Parents
	Tracking  *Tracking
	Assets    *Assets
	Cluster   *Cluster
	Serving   *Serving
	Access    *Access
	Instances *Instances
	Webhooks  *Webhooks
}

// Open opens the workspace database named by dsn and applies migrations: a postgres:// or
// postgresql:// URL is a PostgreSQL database (design 0019), anything else the path of a SQLite
// file, created if needed, in WAL mode. A file that is not a whole SQLite database gives a
// *DamagedError.
func Open(ctx context.Context, dsn string) (*Store, error) {
	if isPostgresURL(dsn) {
		return openPostgresStore(ctx, dsn)
	}
	return openSQLite(ctx, dsn)
}

func openSQLite(ctx context.Context, path string) (*Store, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	conn, err := newCachingConnector(sqliteDSN(path, "_txlock=immediate"+
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
	s := &Store{base: &base{db: db, dialect: sqliteDialect, wal: newWALSyncer(path)}, dsn: path, stop: make(chan struct{}), stopped: make(chan struct{})}
	s.nouns()
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

// openPostgresStore opens the PostgreSQL database at url. Its commits are durable when they
// return and it keeps its own WAL: no syncer, no checkpoints.
func openPostgresStore(ctx context.Context, url string) (*Store, error) {
	db, err := openPostgres(ctx, url)
	if err != nil {
		return nil, err
	}
	s := &Store{base: &base{db: db, dialect: postgresDialect}, dsn: url, stop: make(chan struct{}), stopped: make(chan struct{})}
	s.nouns()
	close(s.stopped)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate the PostgreSQL database: %w", err)
	}
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
