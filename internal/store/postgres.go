package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// The store on PostgreSQL (design 0019). Queries are written once, for SQLite, with ? placeholders;
// every connection to PostgreSQL goes through pgConn, which rewrites them to $1, $2... (rebind)
// and sends Go bools as the 0 and 1 that the schema's integer columns hold, as SQLite stores
// them. Each transaction takes one advisory lock first: SQLite's BEGIN IMMEDIATE lets one writer
// in at a time, and the store's read-modify-write transactions (UpdateRun, next versions, trials)
// were written for that; the lock gives them the same guarantee on PostgreSQL, across every
// server process sharing the database.

// txLockKey is the advisory lock every store transaction on PostgreSQL holds ("hangar" in ASCII).
const txLockKey = 0x68616e676172

// isPostgresURL reports whether dsn names a PostgreSQL database rather than a SQLite file.
func isPostgresURL(dsn string) bool {
	for _, p := range []string{"postgres://", "postgresql://"} {
		if len(dsn) >= len(p) && dsn[:len(p)] == p {
			return true
		}
	}
	return false
}

// openPostgres opens the PostgreSQL database at url (postgres:// or postgresql://).
func openPostgres(ctx context.Context, url string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// Not pgx's message: it quotes the URL, and hides the password on a best-effort basis only.
		return nil, errors.New("open the PostgreSQL database: not a valid postgres:// URL")
	}
	// A writer waits for the store's lock as long as SQLite's busy timeout lets one wait, then
	// fails rather than hang (the URL's own lock_timeout parameter wins).
	if _, ok := cfg.RuntimeParams["lock_timeout"]; !ok {
		cfg.RuntimeParams["lock_timeout"] = "10s"
	}
	db := sql.OpenDB(wrapConnector{base: stdlib.GetConnector(*cfg), wrap: func(c driver.Conn) driver.Conn {
		return &pgConn{connBase{c}}
	}})
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to PostgreSQL at %s:%d/%s: %w", cfg.Host, cfg.Port, cfg.Database, err)
	}
	return db, nil
}

// pgConn is a pgx connection whose queries are rebound and whose transactions are serialised.
type pgConn struct{ connBase }

var (
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.NamedValueChecker  = (*pgConn)(nil)
)

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.base.(driver.ConnPrepareContext).PrepareContext(ctx, rebind(query))
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.base.(driver.ExecerContext).ExecContext(ctx, rebind(query), args)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.base.(driver.QueryerContext).QueryContext(ctx, rebind(query), args)
}

// CheckNamedValue gives Go values the conversions SQLite's column affinity made: a bool is a
// flag, 0 or 1 into the schema's integer columns (a boolean into goose's boolean one); an
// integer into a text column is its decimal text. pgx refuses both otherwise. Every other
// value is left to pgx.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := reflect.ValueOf(nv.Value); v.Kind() {
	case reflect.Bool:
		nv.Value = flag(v.Bool())
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		nv.Value = integer(v.Int())
		return nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		nv.Value = integer(int64(v.Uint()))
		return nil
	}
	return c.base.(driver.NamedValueChecker).CheckNamedValue(nv)
}

// integer is a Go integer that pgx encodes as the parameter's type asks: a number, or its
// decimal text.
type integer int64

func (n integer) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: int64(n), Valid: true}, nil
}

func (n integer) TextValue() (pgtype.Text, error) {
	return pgtype.Text{String: strconv.FormatInt(int64(n), 10), Valid: true}, nil
}

// flag is a Go bool that pgx encodes as the parameter's type asks: an integer or a boolean.
type flag bool

func (f flag) Int64Value() (pgtype.Int8, error) {
	n := int64(0)
	if f {
		n = 1
	}
	return pgtype.Int8{Int64: n, Valid: true}, nil
}

func (f flag) BoolValue() (pgtype.Bool, error) { return pgtype.Bool{Bool: bool(f), Valid: true}, nil }

func (c *pgConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx begins a transaction; one that may write first waits for the store's advisory lock,
// which it holds until it ends.
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.base.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil || opts.ReadOnly {
		return tx, err
	}
	if _, err := c.base.(driver.ExecerContext).ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`,
		[]driver.NamedValue{{Ordinal: 1, Value: int64(txLockKey)}}); err != nil {
		return nil, errors.Join(fmt.Errorf("wait for the store's write lock: %w", err), tx.Rollback())
	}
	return tx, nil
}

// PostgreSQL's SQLSTATE codes for the constraint violations the store turns into its own errors.
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
)

// pgCode is the SQLSTATE of a PostgreSQL error, "" for any other error.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
