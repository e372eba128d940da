package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// eachRow runs query and calls fn with each of its rows, in order.
func eachRow(ctx context.Context, q querier, query string, args []any, fn func(scanner) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// eachRowValues runs query and calls fn with the values of each of its rows, whatever its
// columns; fn's slice is the next row's too.
func eachRowValues(ctx context.Context, q querier, query string, args []any, fn func(vals []any) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryAll runs query and scans each of its rows with scan, in order.
func queryAll[T any](ctx context.Context, q querier, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := eachRow(ctx, q, query, args, func(sc scanner) error {
		v, err := scan(sc)
		if err == nil {
			out = append(out, v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queryList is queryAll for a list served as it is: no rows is an empty list, never nil.
func queryList[T any](ctx context.Context, q querier, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	out, err := queryAll(ctx, q, scan, query, args...)
	if err == nil && out == nil {
		out = []T{}
	}
	return out, err
}

// queryMap runs query and scans each of its rows with scan into a key and its value.
func queryMap[K comparable, V any](ctx context.Context, q querier, scan func(scanner) (K, V, error), query string, args ...any) (map[K]V, error) {
	out := map[K]V{}
	err := eachRow(ctx, q, query, args, func(sc scanner) error {
		k, v, err := scan(sc)
		if err == nil {
			out[k] = v
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanPair scans a row of two columns, a key and its value.
func scanPair[K, V any](sc scanner) (k K, v V, err error) {
	err = sc.Scan(&k, &v)
	return k, v, err
}

// scanValue scans a row of one column.
func scanValue[T any](sc scanner) (v T, err error) {
	err = sc.Scan(&v)
	return v, err
}

// page is the first limit of out, which was read with one more to know whether more follow.
func page[T any](out []T, limit int) ([]T, bool) {
	if len(out) > limit {
		return out[:limit], true
	}
	return out, false
}

// execStmt runs a statement; its error is about doing ("delete setting a").
func execStmt(ctx context.Context, q querier, doing, query string, args ...any) error {
	if _, err := q.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return nil
}

// execOne runs a statement that changes the one row of what ("user alice"): a statement that
// fails is an error about doing ("delete user alice"), one that changes no row ErrNotFound.
func execOne(ctx context.Context, q querier, doing, what, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return affected(res, what)
}

// affected is ErrNotFound, about missing, when res changed no row.
func affected(res sql.Result, missing string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", missing, ErrNotFound)
	}
	return nil
}

// values makes a scanner of *T a scanner of T, for lists of values.
func values[T any](scan func(scanner) (*T, error)) func(scanner) (T, error) {
	return func(sc scanner) (T, error) {
		p, err := scan(sc)
		if err != nil {
			var zero T
			return zero, err
		}
		return *p, nil
	}
}

// withTx runs fn in a transaction, committed when fn returns nil. fn's error is returned as it
// is; failing to begin or commit is an error about doing ("update run 1").
func (s *base) withTx(ctx context.Context, doing string, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return nil
}

// getOne scans row, the one row of what named id: no row is ErrNotFound.
func getOne[T any](row *sql.Row, scan func(scanner) (*T, error), what, id string) (*T, error) {
	v, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s %s: %w", what, id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, id, err)
	}
	return v, nil
}

// deleteWithChildren deletes a parent row (an endpoint) and its children's rows (its
// deployments) in one transaction; no parent row is ErrNotFound.
func (s *base) deleteWithChildren(ctx context.Context, children, parent, what, name string) error {
	what += " " + name
	return s.withTx(ctx, "delete "+what, func(tx *sql.Tx) error {
		if err := execStmt(ctx, tx, "delete "+what, `DELETE FROM `+children+` WHERE endpoint = ?`, name); err != nil {
			return err
		}
		return execOne(ctx, tx, "delete "+what, what, `DELETE FROM `+parent+` WHERE name = ?`, name)
	})
}

// requireRow is ErrNotFound, about what, unless table has a row named name.
func requireRow(ctx context.Context, q querier, table, what, name string) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// stmt is a statement and its arguments.
type stmt struct {
	query string
	args  []any
}

// putRow creates what's row with insert (create; ErrExists if it exists) or replaces it with
// update (ErrNotFound if it does not exist).
func putRow(ctx context.Context, q querier, what string, create bool, insert, update stmt) error {
	if create {
		_, err := q.ExecContext(ctx, insert.query, insert.args...)
		if isUniqueViolation(err) {
			return fmt.Errorf("%s: %w", what, ErrExists)
		}
		return err
	}
	res, err := q.ExecContext(ctx, update.query, update.args...)
	if err != nil {
		return err
	}
	return affected(res, what)
}
