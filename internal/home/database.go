package home

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/hangar-ml/hangar/internal/store"
)

// DatabaseEnv names the environment variable that selects a PostgreSQL database for the
// workspace (the server's --database flag wins over it).
const DatabaseEnv = "HANGAR_DATABASE_URL"

// RedactURL is a database URL without its password, fit for logs, files and errors.
func RedactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(a database URL that does not parse)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// databaseFile records, in the workspace directory, that the workspace's database is
// PostgreSQL (its URL without password): a server started without the URL then refuses to
// start a new, empty SQLite database beside it, and one given a URL refuses while workspace.db
// holds data.
func (h Home) databaseFile() string { return filepath.Join(h.Dir, "database") }

// RecordedDatabase is the PostgreSQL database the workspace was started on ("" for SQLite).
func (h Home) RecordedDatabase() (string, error) {
	b, err := os.ReadFile(h.databaseFile())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("workspace database record: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// ErrDatabaseMismatch is returned when the database asked for is not the workspace's.
var ErrDatabaseMismatch = errors.New("not this workspace's database")

// openPostgres opens the workspace's PostgreSQL database at dsn, refusing when the workspace
// directory's data lives in its SQLite file, and records the choice on first use.
func (h Home) openPostgres(ctx context.Context, dsn string) (*store.Store, error) {
	if !store.IsPostgresURL(dsn) {
		return nil, fmt.Errorf("--database / %s: %q is not a postgres:// or postgresql:// URL", DatabaseEnv, RedactURL(dsn))
	}
	rec, err := h.RecordedDatabase()
	if err != nil {
		return nil, err
	}
	if rec == "" {
		if fi, err := os.Stat(h.DB()); err == nil && fi.Size() > 0 {
			return nil, fmt.Errorf("%w: the workspace %s keeps its data in %s (SQLite); copy it to PostgreSQL with "+
				"`hangar workspace migrate --to URL`, or start the server without --database / %s",
				ErrDatabaseMismatch, h.Dir, h.DB(), DatabaseEnv)
		}
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open the workspace database %s: %w", RedactURL(dsn), err)
	}
	if rec == "" {
		if err := writeAtomic(h.databaseFile(), []byte(RedactURL(dsn)+"\n"), 0o600); err != nil {
			st.Close()
			return nil, fmt.Errorf("record the workspace database: %w", err)
		}
	}
	return st, nil
}

// checkNotPostgres refuses to open the SQLite file of a workspace that was started on
// PostgreSQL.
func (h Home) checkNotPostgres() error {
	rec, err := h.RecordedDatabase()
	if err != nil || rec == "" {
		return err
	}
	return fmt.Errorf("%w: the workspace %s keeps its data in PostgreSQL (%s): start the server with "+
		"--database URL or %s", ErrDatabaseMismatch, h.Dir, rec, DatabaseEnv)
}
