package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// queryAll runs query and scans each of its rows with scan, in order.
func queryAll[T any](ctx context.Context, q querier, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
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
func (s *Store) deleteWithChildren(ctx context.Context, children, parent, what, name string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+children+` WHERE endpoint = ?`, name); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM `+parent+` WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s %s: %w", what, name, ErrNotFound)
	}
	return tx.Commit()
}

// stmt is a statement and its arguments.
type stmt struct {
	query string
	args  []any
}

// putRow creates what's row with insert (create; ErrExists if it exists) or replaces it with
// update (ErrNotFound if it does not exist).
func (s *Store) putRow(ctx context.Context, what string, create bool, insert, update stmt) error {
	if create {
		_, err := s.db.ExecContext(ctx, insert.query, insert.args...)
		if isUniqueViolation(err) {
			return fmt.Errorf("%s: %w", what, ErrExists)
		}
		return err
	}
	res, err := s.db.ExecContext(ctx, update.query, update.args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}
