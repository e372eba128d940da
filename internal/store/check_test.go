package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// filled makes a database at path with rows spread over many pages, closed.
func filled(t *testing.T, path string, rows int) {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rows; i++ {
		if err := s.SetSetting(t.Context(), fmt.Sprintf("k%05d", i), strings.Repeat("v", 200)); err != nil {
			t.Fatal(err)
		}
	}
	// Checkpoint, so that the pages are in the file itself and the WAL is gone on close.
	if _, err := s.db.ExecContext(t.Context(), `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesWhatIsNotAWholeDatabase(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	good := filepath.Join(t.TempDir(), "good.db")
	filled(t, good, 300)
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"garbage", []byte("this is not a database at all, but it is long enough to hold a header" + strings.Repeat("!", 200)), "is not a SQLite database"},
		{"short garbage", []byte("hello"), "is not a SQLite database"},
		{"header only, cut", whole[:60], "cut short"},
		{"cut in half", whole[:len(whole)/2], "cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "workspace.db")
			if err := os.WriteFile(path, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(t.Context(), path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			var d *DamagedError
			if !errors.As(err, &d) || d.Path != path {
				t.Fatalf("Open = %v, want a DamagedError for %s", err, path)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to name %s and say %q", err, path, tt.want)
			}
			// Nothing was written over it.
			if b, _ := os.ReadFile(path); string(b) != string(tt.content) {
				t.Error("Open changed the file")
			}
		})
	}
}

func TestOpenDirectoryIsDamaged(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	path := filepath.Join(t.TempDir(), "workspace.db")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	var d *DamagedError
	if _, err := Open(t.Context(), path); !errors.As(err, &d) {
		t.Fatalf("Open of a directory = %v, want a DamagedError", err)
	}
}

func TestOpenEmptyFileMakesADatabase(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	path := filepath.Join(t.TempDir(), "workspace.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open of an empty file: %v", err)
	}
	s.Close()
}

func TestOpenPathWithURICharacters(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	dir := filepath.Join(t.TempDir(), "a?b#c%20d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "workspace.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetSetting(t.Context(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("the database is not at %s: %v", path, err)
	}
}

func TestBackupIsConsistentWhileWriting(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	dir := t.TempDir()
	s, err := Open(t.Context(), filepath.Join(dir, "workspace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The writer commits a row and the count of rows together; a consistent copy agrees with itself.
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	wrote := make(chan struct{})
	go func() {
		defer wg.Done()
		for i := 1; ctx.Err() == nil; i++ {
			tx, err := s.db.BeginTx(ctx, nil)
			if err != nil {
				return
			}
			_, err = tx.Exec(`INSERT INTO settings (key, value) VALUES (?, ?)`, fmt.Sprintf("row%07d", i), strings.Repeat("x", 500))
			if err == nil {
				_, err = tx.Exec(`INSERT INTO settings (key, value) VALUES ('count', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(i))
			}
			if err != nil || tx.Commit() != nil {
				tx.Rollback()
				return
			}
			if i == 200 {
				close(wrote)
			}
		}
	}()
	<-wrote
	dest := filepath.Join(dir, "backup.db")
	err = Backup(t.Context(), filepath.Join(dir, "workspace.db"), dest)
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file %v, %v; want mode 600", fi.Mode(), err)
	}
	b, err := Open(t.Context(), dest)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	count, _, err := b.Setting(t.Context(), "count")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := b.Settings(t.Context(), "row")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(count); n < 200 || n != len(rows) {
		t.Errorf("the backup holds %d rows and says count %s: not one committed state", len(rows), count)
	}
	if v, err := FileSchemaVersion(t.Context(), dest); err != nil || v != LatestSchema() {
		t.Errorf("FileSchemaVersion of the backup = %d, %v; want %d", v, err, LatestSchema())
	}
}

func TestBackupRefusesAnExistingDestination(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	dir := t.TempDir()
	src := filepath.Join(dir, "workspace.db")
	filled(t, src, 1)
	dest := filepath.Join(dir, "there.db")
	if err := os.WriteFile(dest, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Backup(t.Context(), src, dest); err == nil {
		t.Fatal("Backup over an existing file succeeded")
	}
	if b, _ := os.ReadFile(dest); string(b) != "keep me" {
		t.Error("Backup changed the existing file")
	}
}

func TestBackupOfAMissingDatabase(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	dir := t.TempDir()
	err := Backup(t.Context(), filepath.Join(dir, "nope.db"), filepath.Join(dir, "b.db"))
	if err == nil || !strings.Contains(err.Error(), "nope.db") {
		t.Fatalf("Backup of a missing database = %v, want an error naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.db")); err == nil {
		t.Error("Backup created the database it was to copy")
	}
}

func TestVerifyFindsDamagedPages(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	path := filepath.Join(t.TempDir(), "workspace.db")
	filled(t, path, 500)
	if err := Verify(t.Context(), path); err != nil {
		t.Fatalf("Verify of a good database: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Scribble over the pages after the first few (the header stays intact).
	for i := 4 * 4096; i < len(b)-4096; i += 4096 {
		copy(b[i+8:i+200], strings.Repeat("\xff", 192))
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var d *DamagedError
	if err := Verify(t.Context(), path); !errors.As(err, &d) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Verify of a damaged database = %v, want a DamagedError naming it", err)
	}
}

// A server killed mid-write leaves its last transactions in the WAL only; a backup taken
// while no server runs still holds them.
func TestBackupOfACrashedServersDatabase(t *testing.T) {
	sqliteOnly(t, "checks and backs up SQLite files; on PostgreSQL Backup and Verify return ErrNotSQLite (TestFileToolsRefusePostgres)")
	dir := t.TempDir()
	s, err := Open(t.Context(), filepath.Join(dir, "workspace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetSetting(t.Context(), "last words", "in the WAL"); err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir() // the files as a SIGKILL leaves them (the shared memory file is rebuilt)
	for _, name := range []string{"workspace.db", "workspace.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dest := filepath.Join(t.TempDir(), "backup.db")
	if err := Backup(t.Context(), filepath.Join(crashed, "workspace.db"), dest); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	b, err := Open(t.Context(), dest)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v, ok, err := b.Setting(t.Context(), "last words"); err != nil || !ok || v != "in the WAL" {
		t.Errorf("the backup lacks the WAL's transaction: %q, %v, %v", v, ok, err)
	}
}

// What only a SQLite file has is refused for a PostgreSQL URL, with a typed error, and touches
// no file.
func TestFileToolsRefusePostgres(t *testing.T) {
	const url = "postgres://u@127.0.0.1:1/db"
	dest := filepath.Join(t.TempDir(), "backup.db")
	if err := Backup(t.Context(), url, dest); !errors.Is(err, ErrNotSQLite) {
		t.Errorf("Backup = %v; want ErrNotSQLite", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Backup of a PostgreSQL URL made %s: %v", dest, err)
	}
	if err := Verify(t.Context(), url); !errors.Is(err, ErrNotSQLite) {
		t.Errorf("Verify = %v; want ErrNotSQLite", err)
	}
	if _, err := FileSchemaVersion(t.Context(), url); !errors.Is(err, ErrNotSQLite) {
		t.Errorf("FileSchemaVersion = %v; want ErrNotSQLite", err)
	}
}
