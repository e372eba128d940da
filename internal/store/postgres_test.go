package store

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// Go values are stored as SQLite's column affinity stores them, on both stores: an integer
// into a text column is its decimal text, a bool into an integer column 0 or 1.
func TestValuesAreStoredAsSQLiteStoresThem(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?), (?, ?)`,
		"int", 42, "int64", int64(-7)); err != nil {
		t.Fatalf("integers into a text column: %v", err)
	}
	for key, want := range map[string]string{"int": "42", "int64": "-7"} {
		if got, _, err := s.Setting(ctx, key); err != nil || got != want {
			t.Errorf("setting %s = %q, %v; want %q", key, got, err, want)
		}
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO datastores (name, spec, created_at) VALUES (?, ?, ?)`, "d", "{}", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO models (name, version, spec, archived, created_at) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)`,
		"m", 1, "{}", true, 1, "m", 2, "{}", false, 1); err != nil {
		t.Fatalf("bools into an integer column: %v", err)
	}
	// (a model's version is text since Azure's versions are strings: migration 0026)
	var archived int
	var version string
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), MIN(version) FROM models WHERE archived = ?`, true).Scan(&archived, &version); err != nil || archived != 1 || version != "1" {
		t.Errorf("archived models = %d (version %q), %v; want version 1 alone", archived, version, err)
	}
}

// A PostgreSQL URL that names no reachable server is an error naming where it looked, without
// the password.
func TestOpenUnreachablePostgres(t *testing.T) {
	_, err := Open(t.Context(), "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2")
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "127.0.0.1:1/db") || strings.Contains(msg, "secret") {
		t.Errorf("error = %q; want the host and database, never the password", msg)
	}
}

func TestOpenMalformedPostgresURL(t *testing.T) {
	_, err := Open(t.Context(), "postgres://u:secret@[::1/db")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open of a malformed URL = %v; want an error without the password", err)
	}
}

func TestIsPostgresURL(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://h/db": true, "postgresql://u@h:5432/db?sslmode=disable": true,
		"/var/lib/hangar/workspace.db": false, "postgres.db": false, "": false,
	} {
		if got := isPostgresURL(dsn); got != want {
			t.Errorf("isPostgresURL(%q) = %v; want %v", dsn, got, want)
		}
	}
}

// Read-modify-write transactions are serialised, on PostgreSQL as SQLite's write lock does:
// concurrent updates of one run lose none of each other's changes.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	s := open(t)
	createTestRun(t, s, "r")
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for range writers {
		wg.Go(func() {
			for range each {
				_, err := s.RunWrites.UpdateRun(t.Context(), "r", func(r *job.Run) ([]job.Event, error) {
					r.Attempt++
					return nil, nil
				})
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Runs.Run(t.Context(), "r")
	if err != nil || r.Attempt != 1+writers*each {
		t.Errorf("attempt after %d increments = %d, %v; want %d", writers*each, r.Attempt, err, 1+writers*each)
	}
}

// A writer waiting for the store's lock longer than lock_timeout (10 s unless the URL says)
// gets an error instead of hanging, as SQLite's busy timeout gives one.
func TestAWriterWaitsForTheLockThenFails(t *testing.T) {
	if !onPostgres(t) {
		t.Skip("PostgreSQL only: SQLite's busy timeout is fixed at 10 s (the same rule, too slow to wait for here)")
	}
	s, err := Open(t.Context(), testDSN(t)+"&lock_timeout=200ms")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	held, err := s.db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback()
	start := time.Now()
	err = s.SetSetting(t.Context(), "k", "v") // one statement: no lock
	if err != nil {
		t.Fatalf("a statement outside a transaction waited for the lock: %v", err)
	}
	createErr := s.RunWrites.CreateRun(t.Context(), &job.Run{ID: "r", Compute: "local", Status: job.Queued, CreatedAt: t0,
		Spec: job.Spec{Type: "command", Command: "true"}}, job.Event{Time: t0, To: job.Queued})
	if createErr == nil || !strings.Contains(createErr.Error(), "lock") || time.Since(start) > 5*time.Second {
		t.Errorf("CreateRun while another transaction writes = %v after %s; want a lock timeout after 200ms", createErr, time.Since(start))
	}
}
