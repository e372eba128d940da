package store

import (
	"context"
	"database/sql"
	"fmt"
)

// noBlobRefs are the tables that never name a blob: logs, metrics, events, tracking's params
// and tags, users, tokens and the audit log, sealed secrets, the migrations' bookkeeping. Every
// other table is read by BlobRefs, so a table added later is read until it is listed here.
var noBlobRefs = map[string]bool{
	"log_lines": true, "metrics": true, "metrics_new": true, "latest_metrics": true,
	"run_events": true, "node_events": true, "audit_log": true, "users": true, "user_tokens": true,
	"run_params": true, "run_tags": true, "experiments": true, "experiment_tags": true,
	"job_secrets": true, "goose_db_version": true, "schema_migrations": true,
	"logged_model_params": true, "logged_model_tags": true, "logged_model_metrics": true, "run_logged_models": true,
}

// minRefLen is the length of a blob's hash: a shorter value cannot name one.
const minRefLen = 64

// BlobRefs calls fn with every text value of at least a hash's length of every table that may
// name a blob (runs and their parts, checkpoints and MLflow artifacts, models, environments,
// data assets and datastore paths, components, pipelines' steps, endpoints' deployments, ...),
// read in one transaction, so that a reference moving from one table to another is seen in one
// of them. The collector finds the hashes in them; it does not need to know each table's shape.
func (s *Store) BlobRefs(ctx context.Context, fn func(text string)) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect.postgres() {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("read blob references: %w", err)
	}
	defer tx.Rollback()
	tables, err := s.blobRefTables(ctx, tx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if err := readTexts(ctx, tx, t, fn); err != nil {
			return fmt.Errorf("read blob references in %s: %w", t, err)
		}
	}
	return nil
}

// blobRefTables lists the database's tables but those of noBlobRefs.
func (s *Store) blobRefTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`
	if s.dialect.postgres() {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
			AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	names, err := queryAll(ctx, tx, scanValue[string], q)
	if err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	var out []string
	for _, n := range names {
		if !noBlobRefs[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// readTexts calls fn with the text values of table's rows that are long enough to hold a hash.
func readTexts(ctx context.Context, tx *sql.Tx, table string, fn func(string)) error {
	return readRows(ctx, tx, `SELECT * FROM `+quoteIdent(table), nil, fn)
}

// readRows calls fn with the text values, long enough to hold a hash, of the rows q selects.
func readRows(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(string)) error {
	return eachRowValues(ctx, tx, q, args, func(vals []any) error {
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				if len(v) >= minRefLen {
					fn(v)
				}
			case []byte:
				if len(v) >= minRefLen {
					fn(string(v))
				}
			}
		}
		return nil
	})
}

// RunBlobRefs calls fn with the text values (long enough to hold a hash) of the rows that are
// one run's: its row in runs, and its rows in every other table of BlobRefs that has a run_id
// column (its nodes' parts, checkpoint, MLflow artifacts, ...). They are what a run's deletion
// may free, read before it.
func (s *Store) RunBlobRefs(ctx context.Context, id string, fn func(text string)) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("read blob references of %s: %w", id, err)
	}
	defer tx.Rollback()
	tables, err := s.blobRefTables(ctx, tx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		col := "run_id"
		if t == "runs" {
			col = "id"
		} else if has, err := s.hasColumn(ctx, tx, t, col); err != nil || !has {
			if err != nil {
				return fmt.Errorf("read blob references of %s: %w", id, err)
			}
			continue
		}
		q := `SELECT * FROM ` + quoteIdent(t) + ` WHERE ` + quoteIdent(col) + ` = ?`
		if err := readRows(ctx, tx, q, []any{id}, fn); err != nil {
			return fmt.Errorf("read blob references of %s in %s: %w", id, t, err)
		}
	}
	return nil
}

// hasColumn reports whether table has a column so named.
func (s *Store) hasColumn(ctx context.Context, tx *sql.Tx, table, column string) (bool, error) {
	q := `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`
	if s.dialect.postgres() {
		q = `SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema()
			AND table_name = ? AND column_name = ?`
	}
	var n int
	if err := tx.QueryRowContext(ctx, q, table, column).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}
