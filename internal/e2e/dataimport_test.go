package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/objstore/objtest"
	"github.com/hangar-ml/hangar/internal/store/pgtest"
)

// A data import from PostgreSQL, as a user moving Azure's files would run it: a postgresql
// connection (its password sealed, shown by type only), Azure's import file shape with a query
// into an mltable asset, the import running as a job on local that registers the version when it
// completes, data show saying where it came from, and a job reading the asset's CSV with
// python3. A wrong password fails the import with PostgreSQL's reason, naming the connection; an
// Azure SQL connection is refused naming what is supported; the password appears in no output.
func TestDataImportFromPostgres(t *testing.T) {
	requireTool(t, "python3")
	dbURL := pgtest.NewDatabase(t) // a throwaway database in the test bed's PostgreSQL
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	// The test bed's role cannot make roles, and its password is its name, which outputs show
	// rightly: the wrong password, sealed and handed to the import like any, is the one to look for.
	wrong := "wrong-" + rand.Text()
	seedOrders(t, dbURL)
	w := newWS(t)
	dir := t.TempDir()
	target := (&url.URL{Scheme: "postgresql", Host: u.Host, Path: u.Path, RawQuery: u.RawQuery}).String()
	conn := func(name, pw string) string {
		return "$schema: http://azureml/sdk-2-0/Connection.json\nname: " + name + "\ntype: postgresql\ntarget: " + target +
			"\ncredentials:\n  type: username_password\n  username: " + u.User.Username() + "\n  password: " + pw + "\n"
	}
	writeFiles(t, dir, map[string]string{
		"pg.yml":     conn("sales_db", password),
		"badpw.yml":  conn("stale_db", wrong),
		"sql.yml":    "$schema: http://azureml/sdk-2-0/Connection.json\ntype: azure_sql_db\nname: my_sqldb_connection\ntarget: Server=tcp:x,1433;Database=y\ncredentials:\n    type: username_password\n    username: u\n    password: p\n",
		"import.yml": "$schema: http://azureml/sdk-2-0/DataImport.json\ntype: mltable\nname: orders\nsource:\n  type: database\n  query: select id, item, qty from orders order by id\n  connection: azureml:sales_db\npath: azureml://datastores/workspaceblobstore/paths/pg/${{name}}\n",
		"stale.yml":  "type: mltable\nname: stale\nsource:\n  type: database\n  query: select 1\n  connection: azureml:stale_db\n",
		"read.yml": "command: python3 -c \"import csv,sys; rows=list(csv.DictReader(open(sys.argv[1]+'/data.csv'))); print('rows', len(rows)); [print(r['id'], r['item'], r['qty'] or 'NULL') for r in rows]\" ${{inputs.t}}\n" +
			"inputs:\n  t: {type: mltable, path: azureml:orders@latest}\n",
	})
	file := func(name string) string { return filepath.Join(dir, name) }
	var seen strings.Builder
	cli := func(args ...string) result {
		t.Helper()
		r := w.ok(args...)
		seen.WriteString(r.stdout + r.stderr)
		return r
	}

	if r := w.run("connection", "create", "-f", file("sql.yml")); r.code == 0 ||
		!strings.Contains(r.stderr, "sql.yml: type: connection type azure_sql_db (an Azure SQL database) is not supported: Hangar's connections are s3") ||
		!strings.Contains(r.stderr, "postgresql") {
		t.Fatalf("azure_sql_db connection: exit %d %s", r.code, r.stderr)
	}
	r := cli("connection", "create", "-f", file("pg.yml"))
	if !strings.Contains(r.stdout, "Created connection sales_db (postgresql "+target+"; credentials username_password, sealed)") {
		t.Errorf("connection create said:\n%s", r.stdout)
	}
	cli("connection", "create", "-f", file("badpw.yml"))
	if r := cli("connection", "show", "sales_db"); !strings.Contains(r.stdout, "username_password (sealed; never shown)") {
		t.Errorf("connection show said:\n%s", r.stdout)
	}
	cli("connection", "list", "-o", "json")
	cli("connection", "show", "sales_db", "-o", "yaml")

	r = cli("data", "import", "-f", file("import.yml"), "--stream")
	for _, want := range []string{"import from connection sales_db: select id, item, qty from orders order by id",
		"imported 3 rows of 3 columns", "Registered data asset orders version 1 (mltable): 2 files"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("data import --stream lacks %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}
	r = cli("data", "show", "orders:1")
	for _, want := range []string{"Imported from:", "connection sales_db, query select id, item, qty from orders order by id",
		"azureml://datastores/workspaceblobstore/paths/pg/orders"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("data show lacks %q:\n%s", want, r.stdout)
		}
	}
	var v dataset.Version
	w.dataJSON(&v, "data", "show", "orders:1")
	if v.Import == nil || v.Import.Connection != "sales_db" || v.Files != 2 {
		t.Errorf("data show -o json: %+v", v)
	}
	got := w.runLogs(file("read.yml"))
	seen.WriteString(got)
	if !strings.Contains(got, "rows 3\n1 bolt 40\n2 nut, hex 12\n3 washer NULL") {
		t.Errorf("the job reading azureml:orders@latest saw:\n%s", got)
	}
	// A second import is the next version.
	r = cli("data", "import", "-f", file("import.yml"))
	if !strings.Contains(r.stdout, "data asset orders version 2 (azureml:orders:2) once it completes") {
		t.Errorf("second import said:\n%s", r.stdout)
	}

	// A wrong password: the import fails with PostgreSQL's reason, naming the connection, and
	// registers nothing.
	r = w.run("data", "import", "-f", file("stale.yml"))
	seen.WriteString(r.stdout + r.stderr)
	name := strings.Fields(strings.TrimPrefix(r.stdout, "Created import job "))[0]
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Failed || !strings.Contains(d.StatusReason, "import from connection stale_db: connect to") ||
		!strings.Contains(d.StatusReason, "password authentication failed") {
		t.Errorf("import with a wrong password ended %s: %s", d.Status, d.StatusReason)
	}
	r = cli("job", "show", name)
	seen.WriteString(w.logs(name))
	if r := w.run("data", "show", "stale:1"); r.code == 0 {
		t.Errorf("a failed import registered a version:\n%s", r.stdout)
	}

	cli("connection", "delete", "stale_db")
	if r := w.run("connection", "show", "stale_db"); r.code == 0 || !strings.Contains(r.stderr, "no connection named stale_db") {
		t.Errorf("show after delete: exit %d %s", r.code, r.stderr)
	}
	if strings.Contains(seen.String(), wrong) {
		t.Errorf("the CLI's output or the runs' logs show the connection's password")
	}
	// Nothing in the workspace home holds it in the clear: the server's log, the database (its
	// WAL too), the runs' directories.
	_ = filepath.WalkDir(w.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(wrong)) {
			t.Errorf("%s holds the connection's password", p)
		}
		return nil
	})
}

// seedOrders makes the table the import reads.
func seedOrders(t *testing.T, dbURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE TABLE orders (id int PRIMARY KEY, item text NOT NULL, qty int);
		INSERT INTO orders VALUES (1, 'bolt', 40), (2, 'nut, hex', 12), (3, 'washer', NULL)`); err != nil {
		t.Fatal(err)
	}
}

// A file_system import from an S3 connection (Azure's s3 connection and import files' shape,
// the bucket on the test bed's S3 server, versitygw): a folder into a uri_folder asset that a
// job reads, the one object a path names (Azure's myfiles/titanic.csv), a wrong secret key
// failing the import naming the connection and the refusal, the key in no output nor file.
func TestDataImportFromS3(t *testing.T) {
	s3 := objtest.S3(t)
	bucket := s3.NewContainer(t)
	for key, body := range map[string]string{"in/a.csv": "x,y\n1,2\n", "in/sub/b.txt": "beta\n", "myfiles/titanic.csv": "name,survived\nrose,1\n"} {
		objtest.PutBytes(t, s3, bucket, key, []byte(body))
	}
	w := newWS(t)
	dir := t.TempDir()
	wrong := "wrong-" + rand.Text()
	conn := func(name, secret string) string {
		return "$schema: http://azureml/sdk-2-0/Connection.json\ntype: s3\nname: " + name + "\ntarget: " + s3.URL + "/" + bucket +
			"\ncredentials:\n    type: access_key\n    access_key_id: " + s3.AccessKey + "\n    secret_access_key: " + secret + "\n"
	}
	imp := func(name, path, connection string) string {
		return "$schema: http://azureml/sdk-2-0/DataImport.json\ntype: uri_folder\nname: " + name +
			"\nsource:\n  type: file_system\n  path: " + path + "\n  connection: azureml:" + connection +
			"\npath: azureml://datastores/workspaceblobstore/paths/s3/${{name}}\n"
	}
	writeFiles(t, dir, map[string]string{
		"s3.yml":     conn("my_s3_connection", s3.SecretKey),
		"bad.yml":    conn("stale_s3", wrong),
		"folder.yml": imp("s3_folder", "in", "my_s3_connection"),
		"file.yml":   imp("s3_sample", "myfiles/titanic.csv", "my_s3_connection"),
		"stale.yml":  imp("stale", "in", "stale_s3"),
		"read.yml":   "command: cat ${{inputs.d}}/a.csv ${{inputs.d}}/sub/b.txt ${{inputs.f}}/titanic.csv\ninputs:\n  d: {type: uri_folder, path: azureml:s3_folder@latest}\n  f: {type: uri_folder, path: azureml:s3_sample:1}\n",
	})
	file := func(name string) string { return filepath.Join(dir, name) }
	var seen strings.Builder
	cli := func(args ...string) result {
		t.Helper()
		r := w.ok(args...)
		seen.WriteString(r.stdout + r.stderr)
		return r
	}
	cli("connection", "create", "-f", file("s3.yml"))
	cli("connection", "create", "-f", file("bad.yml"))
	if r := cli("connection", "show", "my_s3_connection"); !strings.Contains(r.stdout, "access_key (sealed; never shown)") {
		t.Errorf("connection show said:\n%s", r.stdout)
	}
	r := cli("data", "import", "-f", file("folder.yml"), "--stream")
	if !strings.Contains(r.stdout+r.stderr, "copied 2 files") || !strings.Contains(r.stderr, "Registered data asset s3_folder version 1 (uri_folder): 2 files") {
		t.Errorf("folder import said:\n%s\n%s", r.stdout, r.stderr)
	}
	r = cli("data", "import", "-f", file("file.yml"), "--stream")
	if !strings.Contains(r.stderr, "Registered data asset s3_sample version 1 (uri_folder): 1 files") {
		t.Errorf("file import said:\n%s\n%s", r.stdout, r.stderr)
	}
	if r := cli("data", "show", "s3_sample:1"); !strings.Contains(r.stdout, "connection my_s3_connection, myfiles/titanic.csv") {
		t.Errorf("data show said:\n%s", r.stdout)
	}
	got := w.runLogs(file("read.yml"))
	seen.WriteString(got)
	if !strings.Contains(got, "x,y\n1,2\nbeta\nname,survived\nrose,1") {
		t.Errorf("the job reading the imported assets saw:\n%s", got)
	}

	r = w.run("data", "import", "-f", file("stale.yml"))
	seen.WriteString(r.stdout + r.stderr)
	name := strings.Fields(strings.TrimPrefix(r.stdout, "Created import job "))[0]
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Failed || !strings.Contains(d.StatusReason, "import from connection stale_s3:") ||
		!strings.Contains(d.StatusReason, "access denied") {
		t.Errorf("import with a wrong secret key ended %s: %s", d.Status, d.StatusReason)
	}
	t.Logf("a wrong secret key: %s", d.StatusReason)
	seen.WriteString(w.logs(name))
	for _, secret := range []string{wrong, s3.SecretKey} {
		if strings.Contains(seen.String(), secret) {
			t.Errorf("the CLI's output or the runs' logs show a secret key")
		}
		_ = filepath.WalkDir(w.home, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds a connection's secret key", p)
			}
			return nil
		})
	}
}
