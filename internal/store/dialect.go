package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotSQLite is returned by what only a SQLite file has (file checks, WAL checkpoints,
// VACUUM INTO backups) when the store is on PostgreSQL, whose own tools do those (pg_dump,
// pg_basebackup; its WAL is its own).
var ErrNotSQLite = errors.New("not supported on PostgreSQL: the workspace database is not a SQLite file")

// dialect holds what differs between the store's two databases, one method per concept; the
// queries elsewhere are written once (for SQLite, with ? placeholders: rebind.go).
type dialect struct {
	// name is the dialect's migrations directory: migrations/<name>.
	name  string
	goose goose.Dialect
}

var (
	sqliteDialect   = dialect{name: "sqlite", goose: goose.DialectSQLite3}
	postgresDialect = dialect{name: "postgres", goose: goose.DialectPostgres}
)

func (d dialect) postgres() bool { return d == postgresDialect }

// migrations is the dialect's migrations directory.
func (d dialect) migrations() (fs.FS, error) {
	return fs.Sub(migrationFiles, "migrations/"+d.name)
}

// lockMigrations serialises migrations across server processes sharing the database at dsn.
// On SQLite it locks a file beside the database (lockFile) until unlock is called; on
// PostgreSQL it returns goose's session locker (an advisory lock), which goose takes itself.
func (d dialect) lockMigrations(ctx context.Context, dsn string) (unlock func(), goose lock.SessionLocker, err error) {
	if d.postgres() {
		// Retry every second for 5 minutes: a long migration elsewhere is waited for.
		goose, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		return func() {}, goose, err
	}
	unlock, err = lockFile(ctx, dsn+"-migrate.lock")
	return unlock, nil, err
}

// tableExists is a query with one placeholder (the table's name) that counts the tables so named.
func (d dialect) tableExists() string {
	if d.postgres() {
		return `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`
	}
	return `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
}

// jsonArrayValues is a subquery of the values of the JSON array of strings bound to its one
// placeholder.
func (d dialect) jsonArrayValues() string {
	if d.postgres() {
		return `SELECT jsonb_array_elements_text(CAST(? AS jsonb))`
	}
	return `SELECT value FROM json_each(?)`
}

// containsFold is a condition true when column contains the text bound to its one placeholder,
// ignoring case. The text is data: LIKE's wildcards in it are not wildcards.
func (d dialect) containsFold(column string) string {
	if d.postgres() {
		return fmt.Sprintf(`strpos(lower(%s), lower(?)) > 0`, column)
	}
	return fmt.Sprintf(`instr(lower(%s), lower(?)) > 0`, column)
}

// jsonText is the text at path (object keys, written in the code, never user text) inside the
// JSON document that column holds as text; SQL NULL where there is none.
func (d dialect) jsonText(column string, path ...string) string {
	if d.postgres() {
		return fmt.Sprintf(`(CAST(%s AS jsonb) #>> '{%s}')`, column, strings.Join(path, ","))
	}
	return fmt.Sprintf(`json_extract(%s, '$.%s')`, column, strings.Join(path, "."))
}

// unindexed is column in a condition that keeps the planner from using an index on it: SQLite's
// unary +. PostgreSQL's planner weighs the indexes by their statistics: the column as it is.
func (d dialect) unindexed(column string) string {
	if d.postgres() {
		return column
	}
	return "+" + column
}

// isUniqueViolation reports whether err is the database refusing a duplicate key, decided from
// the driver's code: PostgreSQL's unique_violation, SQLite's extended UNIQUE or PRIMARY KEY
// constraint code.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	switch sqliteCode(err) {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return pgCode(err) == pgUniqueViolation
}

// isForeignKeyViolation reports whether err is the database refusing a row whose reference is
// missing, decided from the driver's code.
func isForeignKeyViolation(err error) bool {
	if err == nil {
		return false
	}
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY || pgCode(err) == pgForeignKeyViolation
}

// sqliteCode is the extended result code of a SQLite error in err's chain; 0 for any other error.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}
