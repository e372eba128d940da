package dataimport

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hangar-ml/hangar/internal/connection"
)

// DataFile is the CSV a database import writes; MLTableFile describes it.
const (
	DataFile    = "data.csv"
	MLTableFile = "MLTable"
)

// mltable is the MLTable file of a database import: Azure's mltable format reading the CSV,
// its first line the header.
const mltable = `$schema: https://azuremlschemas.azureedge.net/latest/MLTable.schema.json
type: mltable
paths:
  - file: ./` + DataFile + `
transformations:
  - read_delimited:
      delimiter: ','
      encoding: utf8
      header: all_files_same_headers
`

// ConnectTimeout bounds connecting to the database.
const ConnectTimeout = 30 * time.Second

// Stats is what an import wrote.
type Stats struct {
	Rows, Columns int
	Files         int
	Bytes         int64
}

// Database runs query (the import file's text, sent to the database as one statement with no
// parameters: data to the database, never to a shell) on the PostgreSQL database target names,
// as cred's user, and writes the rows into dir as DataFile (a header line, then each row; NULL is
// an empty field; values in PostgreSQL's text form) and MLTableFile.
func Database(ctx context.Context, target string, cred connection.Credentials, query, dir string) (Stats, error) {
	u, err := connection.ParsePostgresTarget(target)
	if err != nil {
		return Stats{}, fmt.Errorf("target: %w", err)
	}
	clearPGEnv()
	cfg, err := pgx.ParseConfig(connString(u))
	if err != nil {
		return Stats{}, fmt.Errorf("target: %w", err)
	}
	cfg.User, cfg.Password = cred.Username, cred.Password
	cfg.ConnectTimeout = ConnectTimeout
	cfg.RuntimeParams["application_name"] = "hangar-data-import"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return Stats{}, fmt.Errorf("connect to %s as %s: %s", u.Redacted(), cred.Username, pgReason(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// An import reads: in a read-only transaction, a statement that would change the database
	// (DELETE ... RETURNING, DDL) is refused by PostgreSQL; the transaction is rolled back.
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return Stats{}, fmt.Errorf("begin a read-only transaction: %s", pgReason(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The extended protocol runs exactly one statement; nil result formats ask every column in
	// text, PostgreSQL's own rendering of each type.
	rr := tx.Conn().PgConn().ExecParams(ctx, query, nil, nil, nil, nil)
	st, err := writeCSV(filepath.Join(dir, DataFile), rr)
	if err != nil {
		return st, err
	}
	if err := os.WriteFile(filepath.Join(dir, MLTableFile), []byte(mltable), 0o644); err != nil {
		return st, fmt.Errorf("write %s: %w", MLTableFile, err)
	}
	st.Files = 2
	return st, nil
}

// clearPGEnv removes the PG* variables (PGSERVICE, PGSERVICEFILE, PGSSLCERT, PGPASSWORD...)
// from this process's environment before the client reads them: they are the node's, and the
// import connects with its connection's target and credentials only. The process is the run's
// supervisor, which needs none of them.
func clearPGEnv() {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "PG") {
			os.Unsetenv(k)
		}
	}
}

// connString is the target as the client's key/value connection string: its host, port,
// database and allowed parameters, and every setting through which the client would use what
// belongs to the node rather than to the connection set empty: a password file, client
// certificates and keys from the node user's ~/.postgresql (the node's PG* variables are gone:
// clearPGEnv).
func connString(u *url.URL) string {
	q := func(v string) string { return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'" }
	kv := []string{"host=" + q(u.Hostname()), "dbname=" + q(strings.Trim(u.Path, "/"))}
	if p := u.Port(); p != "" {
		kv = append(kv, "port="+q(p))
	}
	params := u.Query()
	for _, k := range connection.PostgresParams {
		if v := params.Get(k); v != "" {
			kv = append(kv, k+"="+q(v))
		}
	}
	for _, k := range []string{"passfile", "sslcert", "sslkey", "sslrootcert", "sslpassword", "options", "require_auth"} {
		kv = append(kv, k+"=''")
	}
	return strings.Join(kv, " ")
}

// writeCSV writes the result's rows to file.
func writeCSV(file string, rr *pgconn.ResultReader) (Stats, error) {
	var st Stats
	f, err := os.Create(file)
	if err != nil {
		rr.Close()
		return st, fmt.Errorf("write %s: %w", DataFile, err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := csv.NewWriter(bw)
	fields := rr.FieldDescriptions()
	header := make([]string, len(fields))
	for i, fd := range fields {
		header[i] = fd.Name
	}
	st.Columns = len(fields)
	if len(fields) > 0 {
		_ = w.Write(header)
	}
	rec := make([]string, len(fields))
	for rr.NextRow() {
		for i, v := range rr.Values() {
			rec[i] = string(v) // nil (NULL) is ""
		}
		if err := w.Write(rec); err != nil {
			rr.Close()
			return st, fmt.Errorf("write %s: %w", DataFile, err)
		}
		st.Rows++
	}
	if _, err := rr.Close(); err != nil {
		return st, fmt.Errorf("query: %s", pgReason(err))
	}
	if len(fields) == 0 {
		return st, errors.New("query: the statement returned no rows to import (give a SELECT)")
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return st, fmt.Errorf("write %s: %w", DataFile, err)
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("write %s: %w", DataFile, err)
	}
	if err := f.Sync(); err != nil {
		return st, fmt.Errorf("write %s: %w", DataFile, err)
	}
	info, err := f.Stat()
	if err == nil {
		st.Bytes = info.Size()
	}
	return st, f.Close()
}

// pgReason is what PostgreSQL said (its message and SQLSTATE), else the error.
func pgReason(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	return strings.TrimSpace(err.Error())
}
