package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// CopyReport is what CopyAll copied: rows per table.
type CopyReport struct {
	Tables []TableCount
}

// TableCount is one table's rows.
type TableCount struct {
	Table string
	Rows  int64
}

// copyBatch is how many rows one INSERT carries (PostgreSQL allows 65,535 parameters).
const copyBatch = 200

// CopyAll copies every row of src, a SQLite workspace database, into dst (`hangar workspace
// migrate`), which must be at the same schema version and empty. It copies table by table,
// parents before the tables that refer to them, in one transaction on dst, converting each
// value to the type of dst's column; identity counters then continue after the copied ids. It
// then counts both sides' rows per table: any difference is an error, and the transaction is
// not committed. progress, when set, is told each table as it is done.
func CopyAll(ctx context.Context, src, dst *Store, progress func(TableCount)) (*CopyReport, error) {
	if src.dialect.postgres() {
		return nil, fmt.Errorf("copy from %s: the source must be a SQLite workspace database", redactDSN(src.dsn))
	}
	sv, err := src.SchemaVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema version of %s: %w", src.dsn, err)
	}
	dv, err := dst.SchemaVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema version of the destination: %w", err)
	}
	if sv != dv {
		return nil, fmt.Errorf("the source is at schema version %d and the destination at %d: run the same hangar on both", sv, dv)
	}
	tables, err := src.copyOrder(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := dst.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin the copy: %w", err)
	}
	defer tx.Rollback()
	if err := clearNew(ctx, tx, tables); err != nil {
		return nil, err
	}
	rep := &CopyReport{}
	for _, t := range tables {
		n, err := copyTable(ctx, src, dst, tx, t)
		if err != nil {
			return nil, fmt.Errorf("copy table %s: %w", t, err)
		}
		rep.Tables = append(rep.Tables, TableCount{Table: t, Rows: n})
		if progress != nil {
			progress(TableCount{Table: t, Rows: n})
		}
	}
	if err := dst.resetIdentities(ctx, tx); err != nil {
		return nil, err
	}
	for _, tc := range rep.Tables {
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(tc.Table)).Scan(&n); err != nil {
			return nil, fmt.Errorf("count the copied rows of %s: %w", tc.Table, err)
		}
		if n != tc.Rows {
			return nil, fmt.Errorf("table %s: %d rows read, %d in the destination", tc.Table, tc.Rows, n)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit the copy: %w", err)
	}
	return rep, nil
}

// userTables are tables that hold only what users made: a destination with a row in one of them
// is a workspace in use, not a new one.
var userTables = []string{"runs", "computes", "models", "environments", "endpoints", "data_assets", "user_tokens", "audit_log"}

// clearNew refuses a destination in use, and empties the rows its migrations seeded (the
// default experiment, say): the copy brings the source's.
func clearNew(ctx context.Context, tx *sql.Tx, tables []string) error {
	for _, t := range userTables {
		if !slices.Contains(tables, t) {
			continue
		}
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(t)).Scan(&n); err != nil {
			return fmt.Errorf("count the destination's %s: %w", t, err)
		}
		if n > 0 {
			return fmt.Errorf("the destination is not a new workspace database: its table %s has %d rows", t, n)
		}
	}
	for i := len(tables) - 1; i >= 0; i-- {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(tables[i])); err != nil {
			return fmt.Errorf("empty the destination's %s: %w", tables[i], err)
		}
	}
	return nil
}

// copyOrder is the source's tables (the migration bookkeeping left out) with every table after
// the tables its foreign keys refer to.
func (s *Store) copyOrder(ctx context.Context) ([]string, error) {
	names, err := queryAll(ctx, s.db, scanValue[string], `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name NOT IN ('schema_migrations', 'goose_db_version') ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	parents := map[string][]string{}
	for _, t := range names {
		if parents[t], err = queryAll(ctx, s.db, scanValue[string], `SELECT "table" FROM pragma_foreign_key_list(?)`, t); err != nil {
			return nil, fmt.Errorf("foreign keys of %s: %w", t, err)
		}
	}
	return topoOrder(names, parents)
}

// topoOrder orders names so that each comes after its parents (names without a relation keep
// their order); a cycle is an error.
func topoOrder(names []string, parents map[string][]string) ([]string, error) {
	var out []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string) error
	visit = func(t string) error {
		switch state[t] {
		case 1:
			return fmt.Errorf("the foreign keys of table %s form a cycle", t)
		case 2:
			return nil
		}
		state[t] = 1
		ps := slices.Clone(parents[t])
		sort.Strings(ps)
		for _, p := range ps {
			if p != t && slices.Contains(names, p) {
				if err := visit(p); err != nil {
					return err
				}
			}
		}
		state[t] = 2
		out = append(out, t)
		return nil
	}
	for _, t := range names {
		if err := visit(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// copyTable copies table t's rows, in rowid order, into dst within tx, and returns how many.
func copyTable(ctx context.Context, src, dst *Store, tx *sql.Tx, t string) (int64, error) {
	kinds, err := dst.columnKinds(ctx, tx, t)
	if err != nil {
		return 0, err
	}
	cols, err := src.columnNames(ctx, t)
	if err != nil {
		return 0, err
	}
	for _, c := range cols {
		if _, ok := kinds[c]; !ok {
			return 0, fmt.Errorf("column %s is not in the destination's table", c)
		}
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = quoteIdent(c)
	}
	order, err := src.keyOrder(ctx, t)
	if err != nil {
		return 0, err
	}
	var n int64
	var batch []any
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		q := insertRows(t, quoted, len(batch)/len(cols))
		_, err := tx.ExecContext(ctx, q, batch...)
		batch = batch[:0]
		return err
	}
	query := `SELECT ` + strings.Join(quoted, ", ") + ` FROM ` + quoteIdent(t) + ` ORDER BY ` + order
	err = eachRowValues(ctx, src.db, query, nil, func(vals []any) error {
		for i, c := range cols {
			v, err := convertValue(vals[i], kinds[c])
			if err != nil {
				return fmt.Errorf("row %d, column %s: %w", n+1, c, err)
			}
			batch = append(batch, v)
		}
		n++
		if len(batch) >= copyBatch*len(cols) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	return n, flush()
}

// insertRows is an INSERT of k rows of the quoted columns into table t, with ? placeholders.
func insertRows(t string, quoted []string, k int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(quoted)), ", ") + ")"
	rows := make([]string, k)
	for i := range rows {
		rows[i] = row
	}
	return `INSERT INTO ` + quoteIdent(t) + ` (` + strings.Join(quoted, ", ") + `) VALUES ` + strings.Join(rows, ", ")
}

// columnNames is table t's columns in the source, in order.
func (s *Store) columnNames(ctx context.Context, t string) ([]string, error) {
	names, err := queryAll(ctx, s.db, scanValue[string], `SELECT name FROM pragma_table_info(?) ORDER BY cid`, t)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", t, err)
	}
	return names, nil
}

// keyOrder is what orders table t's rows in the source: its primary key's columns, else the
// rowid (a WITHOUT ROWID table always has a primary key).
func (s *Store) keyOrder(ctx context.Context, t string) (string, error) {
	pk, err := queryAll(ctx, s.db, scanValue[string], `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`, t)
	if err != nil {
		return "", fmt.Errorf("primary key of %s: %w", t, err)
	}
	if len(pk) == 0 {
		return "rowid", nil
	}
	for i, c := range pk {
		pk[i] = quoteIdent(c)
	}
	return strings.Join(pk, ", "), nil
}

// quoteIdent quotes a table or column name, which comes from the database's own catalog.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// redactDSN is a DSN fit for an error: a PostgreSQL URL loses its password.
func redactDSN(dsn string) string {
	if !isPostgresURL(dsn) {
		return dsn
	}
	return "the PostgreSQL database"
}

// IsPostgresURL reports whether Open takes dsn for a PostgreSQL database rather than a SQLite
// file's path.
func IsPostgresURL(dsn string) bool { return isPostgresURL(dsn) }
