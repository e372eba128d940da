package store

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the admin connection
)

// The package's tests run on SQLite, and on PostgreSQL with HANGAR_TEST_STORE=postgres and
// HANGAR_TEST_DATABASE_URL the URL of a role that may create databases (scripts/setup/postgres.sh
// prints one; scripts/test.sh runs the package a second time so). Each test gets a database of its
// own, dropped when it ends. Tests of what only a SQLite file has call sqliteOnly.

const (
	storeEnv = "HANGAR_TEST_STORE"
	pgURLEnv = "HANGAR_TEST_DATABASE_URL"
)

// onPostgres reports whether this run of the package tests the PostgreSQL store.
func onPostgres(t testing.TB) bool {
	t.Helper()
	switch v := os.Getenv(storeEnv); v {
	case "", "sqlite":
		return false
	case "postgres":
		return true
	default:
		t.Fatalf("%s=%q: want sqlite or postgres", storeEnv, v)
		return false
	}
}

// sqliteOnly skips a test on PostgreSQL, saying why it does not apply there.
func sqliteOnly(t testing.TB, why string) {
	t.Helper()
	if onPostgres(t) {
		t.Skip("SQLite only: " + why)
	}
}

// testDSN is what Open takes for a new, empty workspace database of the test's own: a file in
// a temporary directory, or a PostgreSQL database created for the test.
func testDSN(t testing.TB) string {
	t.Helper()
	if !onPostgres(t) {
		return filepath.Join(t.TempDir(), "ws.db")
	}
	return newTestDatabase(t, pgAdminURL(t))
}

// pgAdminURL is the URL of a PostgreSQL role that may create databases; without one the test
// skips, or fails with CI set.
func pgAdminURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(pgURLEnv)
	if u == "" {
		msg := "needs PostgreSQL: " + pgURLEnv + " (bash scripts/setup/postgres.sh prints it)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return u
}

// newTestDatabase creates a database with a random name through the admin URL, drops it when
// the test ends, and returns its URL.
func newTestDatabase(t testing.TB, admin string) string {
	t.Helper()
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", pgURLEnv, err)
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := make([]byte, 8)
	rand.Read(b)
	name := "hangar_t_" + hex.EncodeToString(b) // hex only: safe as an identifier
	if _, err := db.ExecContext(t.Context(), `CREATE DATABASE `+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
