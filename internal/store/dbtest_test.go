package store

import (
	"path/filepath"
	"testing"

	"github.com/hangar-ml/hangar/internal/store/pgtest"
)

// The package's tests run on SQLite, and on PostgreSQL with HANGAR_TEST_STORE=postgres and
// HANGAR_TEST_DATABASE_URL the URL of a role that may create databases (scripts/setup/postgres.sh
// prints one; scripts/test.sh runs the package a second time so). Each test gets a database of its
// own, dropped when it ends. Tests of what only a SQLite file has call sqliteOnly.

const (
	storeEnv = "HANGAR_TEST_STORE"
)

// onPostgres reports whether this run of the package tests the PostgreSQL store.
func onPostgres(t testing.TB) bool {
	t.Helper()
	return pgtest.Selected(t, storeEnv)
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
	return pgtest.NewDatabase(t)
}
