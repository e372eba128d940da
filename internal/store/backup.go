package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Backup writes a consistent copy of the database at src to dest, a file that must not exist
// yet, while servers keep reading and writing src: VACUUM INTO reads in one transaction, so the
// copy holds exactly the transactions committed when it began. The copy is private (0600) and
// checked page by page (Verify) before Backup returns.
//
// On PostgreSQL (src a postgres:// URL) it returns ErrNotSQLite: pg_dump backs that up.
func Backup(ctx context.Context, src, dest string) error {
	if isPostgresURL(src) {
		return ErrNotSQLite
	}
	if err := checkFile(src); err != nil {
		return err
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("back up %s: %w", src, err)
	}
	// VACUUM INTO fills an empty file and keeps its mode, so the copy is never readable by others.
	f, err := os.OpenFile(dest, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("back up %s: %w", src, err)
	}
	f.Close()
	if err := vacuumInto(ctx, src, dest); err != nil {
		os.Remove(dest)
		return fmt.Errorf("back up %s to %s: %w", src, dest, err)
	}
	if err := syncFile(dest); err != nil {
		return fmt.Errorf("back up %s: %w", src, err)
	}
	if err := Verify(ctx, dest); err != nil {
		return fmt.Errorf("check the backup: %w", err)
	}
	return nil
}

// syncFile makes a file's content durable (VACUUM INTO writes without syncing).
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func vacuumInto(ctx context.Context, src, dest string) error {
	db, err := openReadOnly(src)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dest); err != nil {
		return asDamaged(src, err)
	}
	return nil
}

// Verify runs SQLite's quick check over every page of the database at path, read-only; damage
// gives a *DamagedError that quotes the first problems found. On PostgreSQL (path a postgres://
// URL) it returns ErrNotSQLite.
func Verify(ctx context.Context, path string) error {
	if isPostgresURL(path) {
		return ErrNotSQLite
	}
	if err := checkFile(path); err != nil {
		return err
	}
	db, err := openReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	problems, err := queryAll(ctx, db, scanValue[string], `PRAGMA quick_check(5)`)
	if err != nil {
		return asDamaged(path, fmt.Errorf("quick check: %w", err))
	}
	problems = slices.DeleteFunc(problems, func(s string) bool { return s == "ok" })
	if len(problems) > 0 {
		return &DamagedError{Path: path, Reason: "is damaged: " + strings.Join(problems, "; ")}
	}
	return nil
}

// FileSchemaVersion reads the newest migration applied to the database file at path, read-only.
// On PostgreSQL (path a postgres:// URL) it returns ErrNotSQLite: Store.SchemaVersion reads it.
func FileSchemaVersion(ctx context.Context, path string) (int, error) {
	if isPostgresURL(path) {
		return 0, ErrNotSQLite
	}
	if err := checkFile(path); err != nil {
		return 0, err
	}
	db, err := openReadOnly(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	// A file no goose has opened yet (a backup made before it) has the old runner's table only.
	var goose int
	if err := db.QueryRowContext(ctx, sqliteDialect.tableExists(), versionTable).Scan(&goose); err != nil {
		return 0, asDamaged(path, fmt.Errorf("read schema version: %w", err))
	}
	q := `SELECT MAX(version_id) FROM ` + versionTable + ` WHERE is_applied = 1`
	if goose == 0 {
		q = `SELECT MAX(version) FROM ` + legacyTable
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return 0, asDamaged(path, fmt.Errorf("read schema version: %w", err))
	}
	return int(v.Int64), nil
}

// openReadOnly opens an existing database without the right to change it (mode=ro: a missing
// file is an error, not a new database).
func openReadOnly(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("database %s: %w", path, err)
		}
		return nil, err
	}
	db, err := sql.Open("sqlite", sqliteDSN(path, "mode=ro&_pragma=busy_timeout(10000)"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}
