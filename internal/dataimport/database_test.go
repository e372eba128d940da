package dataimport

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hangar-ml/hangar/internal/connection"
)

func TestConnString(t *testing.T) {
	u, err := connection.ParsePostgresTarget("postgresql://db.example.com:6543/sales?sslmode=verify-full&connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	got := connString(u)
	for _, want := range []string{"host='db.example.com'", "port='6543'", "dbname='sales'", "sslmode='verify-full'", "connect_timeout='5'",
		"passfile=''", "sslcert=''", "sslkey=''", "sslrootcert=''"} {
		if !strings.Contains(got, want) {
			t.Errorf("connString = %s, lacks %s", got, want)
		}
	}
	odd := &url.URL{Scheme: "postgresql", Host: "h", Path: "/a'b\\c"}
	if got := connString(odd); !strings.Contains(got, `dbname='a\'b\\c'`) {
		t.Errorf("connString quotes %q as %s", odd.Path, got)
	}
}

// The test bed's PostgreSQL (scripts/setup/postgres.sh): an import reads a query's rows into
// CSV (a header, NULL as an empty field, quoting as CSV has it) and an MLTable file; it runs in
// a read-only transaction, so a statement that would change the database is refused and changes
// nothing; the node's PG* environment (a service file that would send it elsewhere) is not used.
func TestDatabaseImport(t *testing.T) {
	dsn := os.Getenv("HANGAR_TEST_DATABASE_URL")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("HANGAR_TEST_DATABASE_URL is not set (scripts/setup/postgres.sh)")
		}
		t.Skip("HANGAR_TEST_DATABASE_URL is not set (scripts/setup/postgres.sh)")
	}
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.WithoutCancel(ctx)) }) // after the DROP below
	table := "import_test_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.Exec(ctx, "CREATE TABLE "+table+" (id int, name text, note text); INSERT INTO "+table+" VALUES (1, 'a,b', NULL), (2, 'say \"hi\"', 'x')"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.WithoutCancel(ctx), "DROP TABLE "+table) })
	u, _ := url.Parse(dsn)
	pw, _ := u.User.Password()
	cred := connection.Credentials{Username: u.User.Username(), Password: pw}
	u.User = nil
	q := u.Query()
	u.RawQuery = url.Values{"sslmode": q["sslmode"]}.Encode()
	target := u.String()

	svc := filepath.Join(t.TempDir(), "pg_service.conf")
	if err := os.WriteFile(svc, []byte("[elsewhere]\nhost=192.0.2.1\nport=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGSERVICEFILE", svc)
	t.Setenv("PGSERVICE", "elsewhere")

	dir := t.TempDir()
	st, err := Database(ctx, target, cred, "SELECT id, name, note FROM "+table+" ORDER BY id", dir)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if st.Rows != 2 || st.Columns != 3 || st.Files != 2 {
		t.Errorf("stats %+v, want 2 rows of 3 columns, 2 files", st)
	}
	got, _ := os.ReadFile(filepath.Join(dir, DataFile))
	if want := "id,name,note\n1,\"a,b\",\n2,\"say \"\"hi\"\"\",x\n"; string(got) != want {
		t.Errorf("%s = %q, want %q", DataFile, got, want)
	}
	if m, err := os.ReadFile(filepath.Join(dir, MLTableFile)); err != nil || !strings.Contains(string(m), "file: ./"+DataFile) {
		t.Errorf("%s: %q, %v", MLTableFile, m, err)
	}

	_, err = Database(ctx, target, cred, "DELETE FROM "+table+" RETURNING id", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Errorf("a DELETE ... RETURNING: %v, want refused in a read-only transaction", err)
	}
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != 2 {
		t.Errorf("rows left after the refused DELETE: %d (%v), want 2", n, err)
	}
}
