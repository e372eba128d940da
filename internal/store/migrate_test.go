package store

import (
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hangar-ml/hangar/internal/store/pgtest"
)

// migrationVersions lists a dialect's migration files by version.
func migrationVersions(t *testing.T, d dialect) map[string]string {
	t.Helper()
	fsys, err := d.migrations()
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("%s migrations: %v, %v", d.name, names, err)
	}
	out := map[string]string{}
	for _, n := range names {
		out[strings.SplitN(n, "_", 2)[0]] = n
	}
	return out
}

// Both dialects have a file for every version: the same number, the same name.
func TestMigrationDirectoriesHoldTheSameVersions(t *testing.T) {
	lite, pg := migrationVersions(t, sqliteDialect), migrationVersions(t, postgresDialect)
	if diff := cmp.Diff(lite, pg); diff != "" {
		t.Errorf("migrations (-sqlite +postgres):\n%s", diff)
	}
	if got := LatestSchema(); fmt.Sprintf("%04d", got) != slices.Max(slices.Collect(mapKeys(lite))) {
		t.Errorf("LatestSchema = %d; want the newest file's version", got)
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The two dialects' migrations make the same tables with the same columns.
func TestBothSchemasHaveTheSameTablesAndColumns(t *testing.T) {
	lite, err := Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := Open(t.Context(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	want := columns(t, lite.db, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid`)
	got := columns(t, pg.db, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if len(want) < 30 {
		t.Fatalf("SQLite schema has %d tables; want the whole schema", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tables and columns (-sqlite +postgres):\n%s", diff)
	}
}

// columns reads table → column names (in order) from a query of (table, column) rows.
func columns(t *testing.T, db *sql.DB, q string) map[string][]string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		out[table] = append(out[table], col)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A workspace migrated by the store's old runner (versions in schema_migrations) is upgraded in
// place: its recorded versions are adopted once, none is applied again, the rest are applied,
// and its rows are kept.
func TestOldRunnersWorkspaceUpgradesInPlace(t *testing.T) {
	sqliteOnly(t, "the old runner only ever made SQLite workspaces")
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ws.db")
	db := sql.OpenDB(mustConnector(t, path))
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	files := migrationVersions(t, sqliteDialect)
	versions := slices.Sorted(mapKeys(files))
	for _, v := range versions { // in order, as the old runner applied them, up to 0021
		if v > "0021" { // 0022 and later come with the upgrade
			break
		}
		body, err := migrationFiles.ReadFile("migrations/sqlite/" + files[v])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", files[v], err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, 7)`, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('kept', 'yes')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if v, err := FileSchemaVersion(ctx, path); err != nil || v != 21 {
		t.Errorf("FileSchemaVersion of the old runner's file = %d, %v; want 21", v, err)
	}

	for i := range 2 { // the second open finds everything applied and adopts nothing again
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open #%d of the old runner's workspace: %v", i, err)
		}
		if v, err := s.SchemaVersion(ctx); err != nil || v != LatestSchema() {
			t.Errorf("open #%d: SchemaVersion = %d, %v; want %d", i, v, err, LatestSchema())
		}
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0`).Scan(&n); err != nil || n != len(files) {
			t.Errorf("open #%d: goose records %d versions, %v; want %d, each once", i, n, err, len(files))
		}
		if v, ok, err := s.Setting(ctx, "kept"); err != nil || !ok || v != "yes" {
			t.Errorf("open #%d: setting kept = %q, %v, %v", i, v, ok, err)
		}
		if _, err := s.Access.Users(ctx); err != nil { // 0022, applied by the upgrade
			t.Errorf("open #%d: users: %v", i, err)
		}
		s.Close()
		if v, err := FileSchemaVersion(ctx, path); err != nil || v != LatestSchema() {
			t.Errorf("open #%d: FileSchemaVersion = %d, %v; want %d", i, v, err, LatestSchema())
		}
	}
}

// Servers starting together on a new database apply each migration once (on PostgreSQL goose's
// advisory lock serialises them; on SQLite its write lock) and all open it.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	dsn := testDSN(t)
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	stores := make([]*Store, 4)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, dsn) })
	}
	wg.Wait()
	for i, s := range stores {
		if errs[i] != nil {
			t.Errorf("open #%d: %v", i, errs[i])
			continue
		}
		defer s.Close()
	}
	if t.Failed() {
		return
	}
	var n, distinct int
	if err := stores[0].db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT version_id) FROM goose_db_version`).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != distinct || n != len(migrationVersions(t, sqliteDialect))+1 {
		t.Errorf("goose_db_version holds %d rows, %d versions; want each version (and 0) once", n, distinct)
	}
}
