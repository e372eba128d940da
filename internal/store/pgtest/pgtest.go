// Package pgtest gives tests a PostgreSQL database of their own, created through the admin URL
// that scripts/setup/postgres.sh prints (HANGAR_TEST_DATABASE_URL) and dropped when the test
// ends. Without that URL a test skips, or fails when CI is set.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the admin connection
)

// URLEnv names the admin URL: a role that may create databases.
const URLEnv = "HANGAR_TEST_DATABASE_URL"

// AdminURL is the admin URL; without one the test skips, or fails with CI set.
func AdminURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(URLEnv)
	if u == "" {
		msg := "needs PostgreSQL: " + URLEnv + " (bash scripts/setup/postgres.sh prints it)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return u
}

// NewDatabase creates a database with a random name through the admin URL, drops it when the
// test ends, and returns its URL.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", URLEnv, err)
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
		// WITH (FORCE) ends the test's sessions, but not an autovacuum worker's (another role's):
		// a database the test wrote a lot to may be vacuumed just then, for a moment. Retry.
		var err error
		for i := 0; i < 40; i++ {
			if _, err = db.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err == nil {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Errorf("drop test database %s: %v", name, err)
	})
	u.Path = "/" + name
	return u.String()
}

// Selected reports whether the environment variable env (HANGAR_TEST_STORE for the store's
// tests, HANGAR_E2E_STORE for the e2e tests) selects PostgreSQL: "postgres" does, "" or "sqlite"
// does not, anything else fails the test.
func Selected(t testing.TB, env string) bool {
	t.Helper()
	switch v := os.Getenv(env); v {
	case "", "sqlite":
		return false
	case "postgres":
		return true
	default:
		t.Fatalf("%s=%q: want sqlite or postgres", env, v)
		return false
	}
}
