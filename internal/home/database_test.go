package home

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://hangar:s3cret@db.example:5432/ws?sslmode=require", "postgres://hangar:xxxxx@db.example:5432/ws?sslmode=require"},
		{"postgres://hangar@db.example/ws", "postgres://hangar@db.example/ws"},
		{"postgresql://db.example/ws?password=s3cret&sslmode=disable", "postgresql://db.example/ws?password=xxxxx&sslmode=disable"},
		{"postgres://%zz", "(a database URL that does not parse)"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(RedactURL(tc.in), "s3cret") {
			t.Errorf("RedactURL(%q) keeps the password", tc.in)
		}
	}
}

// A workspace whose data is in its SQLite file is not silently started on an empty PostgreSQL
// database, and one started on PostgreSQL is not silently started on a new SQLite file.
func TestDatabaseChoiceIsKept(t *testing.T) {
	ctx := t.Context()
	h := Home{Dir: filepath.Join(t.TempDir(), "ws")}
	if err := h.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.DB(), []byte("SQLite format 3\x00 and pages"), 0o600); err != nil {
		t.Fatal(err)
	}
	pg := h
	pg.Database = "postgres://hangar:s3cret@127.0.0.1:1/ws"
	_, err := pg.OpenStore(ctx)
	if !errors.Is(err, ErrDatabaseMismatch) || !strings.Contains(err.Error(), "hangar workspace migrate") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("PostgreSQL over a SQLite workspace: %v; want a refusal naming workspace migrate, without the password", err)
	}
	pg.Database = "mysql://db/ws"
	if _, err := pg.OpenStore(ctx); err == nil || !strings.Contains(err.Error(), "not a postgres://") {
		t.Errorf("a URL of another database: %v", err)
	}

	h2 := Home{Dir: filepath.Join(t.TempDir(), "ws2")}
	if err := h2.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(h2.databaseFile(), []byte("postgres://hangar:xxxxx@db/ws\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h2.OpenStore(ctx); !errors.Is(err, ErrDatabaseMismatch) || !strings.Contains(err.Error(), DatabaseEnv) {
		t.Errorf("SQLite for a PostgreSQL workspace: %v; want a refusal naming %s", err, DatabaseEnv)
	}
	if _, err := os.Stat(h2.DB()); err == nil {
		t.Errorf("a refused open created %s", h2.DB())
	}
	if _, err := h2.Backup(ctx, filepath.Join(t.TempDir(), "bk"), time.Now()); !errors.Is(err, ErrDatabaseMismatch) || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("backup of a PostgreSQL workspace: %v; want a refusal naming pg_dump", err)
	}
}
