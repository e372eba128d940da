package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
)

// Migrations are goose's (design 0019): one directory per dialect, the same version numbers in
// both (a test holds them to it), applied in order by goose's provider, each in a transaction.
// A version missing below the newest applied one is applied too (two written in parallel on
// branches may land in either order).
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// versionTable is goose's record of applied versions.
const versionTable = "goose_db_version"

// legacyTable is where the store's own runner recorded versions, before goose.
const legacyTable = "schema_migrations"

// migrate applies every migration not yet recorded, one process at a time.
func (s *Store) migrate(ctx context.Context) error {
	unlock, locker, err := s.dialect.lockMigrations(ctx, s.dsn)
	if err != nil {
		return err
	}
	defer unlock()
	if err := adoptLegacyVersions(ctx, s.db, s.dialect); err != nil {
		return err
	}
	p, err := s.migrations(locker)
	if err != nil {
		return err
	}
	// p is not closed: Provider.Close closes the store's database.
	if _, err := p.Up(ctx); err != nil {
		return err
	}
	return nil
}

// migrations is the goose provider of the store's dialect, taking locker (if any) around its work.
func (s *Store) migrations(locker lock.SessionLocker) (*goose.Provider, error) {
	fsys, err := s.dialect.migrations()
	if err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{goose.WithAllowOutofOrder(true), goose.WithDisableGlobalRegistry(true)}
	if locker != nil {
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	return goose.NewProvider(s.dialect.goose, s.db, fsys, opts...)
}

// adoptLegacyVersions copies the versions the store's old runner recorded (a SQLite workspace
// from before goose) into goose's table, once: when the old table is there and goose's is not.
// Nothing is applied again. The old table stays, unread.
func adoptLegacyVersions(ctx context.Context, db *sql.DB, d dialect) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("adopt recorded versions: %w", err)
	}
	defer tx.Rollback()
	legacy, err := hasTable(ctx, tx, d, legacyTable)
	if err != nil || !legacy {
		return err
	}
	if adopted, err := hasTable(ctx, tx, d, versionTable); err != nil || adopted {
		return err
	}
	versions, err := legacyVersions(ctx, tx)
	if err != nil {
		return err
	}
	store, err := database.NewStore(d.goose, versionTable)
	if err != nil {
		return err
	}
	if err := store.CreateVersionTable(ctx, tx); err != nil {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	for _, v := range append([]int64{0}, versions...) {
		if err := store.Insert(ctx, tx, database.InsertRequest{Version: v}); err != nil {
			return fmt.Errorf("adopt version %d: %w", v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("adopt recorded versions: %w", err)
	}
	return nil
}

func hasTable(ctx context.Context, tx *sql.Tx, d dialect, name string) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, d.tableExists(), name).Scan(&n); err != nil {
		return false, fmt.Errorf("look for table %s: %w", name, err)
	}
	return n > 0, nil
}

func legacyVersions(ctx context.Context, tx *sql.Tx) ([]int64, error) {
	out, err := queryAll(ctx, tx, scanValue[int64], `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", legacyTable, err)
	}
	return out, nil
}

// SchemaVersion is the newest applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT MAX(version_id) FROM `+versionTable+` WHERE is_applied = ?`, true).Scan(&v)
	return int(v.Int64), err
}

// LatestSchema is the newest migration this binary knows.
func LatestSchema() int {
	names, _ := fs.Glob(migrationFiles, "migrations/sqlite/*.sql")
	latest := 0
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/sqlite/")
		if v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0]); err == nil && v > latest {
			latest = v
		}
	}
	return latest
}
