package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hangar-ml/hangar/internal/compute"
)

// PutCompute creates or replaces a compute target.
func (s *Cluster) PutCompute(ctx context.Context, t compute.Target) error {
	props := string(t.Properties)
	if props == "" {
		props = "{}"
	}
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO computes (name, type, description, properties, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET type = excluded.type, description = excluded.description,
			properties = excluded.properties`,
		t.Name, t.Type, t.Description, props, nanos(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("put compute %s: %w", t.Name, err)
	}
	return nil
}

// EnsureCompute creates a compute target unless one with that name exists.
func (s *Cluster) EnsureCompute(ctx context.Context, t compute.Target) error {
	props := string(t.Properties)
	if props == "" {
		props = "{}"
	}
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO computes (name, type, description, properties, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO NOTHING`,
		t.Name, t.Type, t.Description, props, nanos(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("ensure compute %s: %w", t.Name, err)
	}
	return nil
}

// Compute returns one compute target.
func (s *Cluster) Compute(ctx context.Context, name string) (*compute.Target, error) {
	row := s.db.QueryRowContext(ctx,
		`SELECT name, type, description, properties, created_at FROM computes WHERE name = ?`, name)
	t, err := scanCompute(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("compute %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read compute %s: %w", name, err)
	}
	return t, nil
}

// Computes lists the compute targets by name.
func (s *Cluster) Computes(ctx context.Context) ([]compute.Target, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT name, type, description, properties, created_at FROM computes ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list computes: %w", err)
	}
	defer rows.Close()
	var out []compute.Target
	for rows.Next() {
		t, err := scanCompute(rows)
		if err != nil {
			return nil, fmt.Errorf("list computes: %w", err)
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

func scanCompute(r scanner) (*compute.Target, error) {
	var t compute.Target
	var props string
	var created int64
	if err := r.Scan(&t.Name, &t.Type, &t.Description, &props, &created); err != nil {
		return nil, err
	}
	t.Properties = []byte(props)
	t.CreatedAt = fromNanos(created)
	return &t, nil
}

// DeleteCompute removes a compute target.
func (s *Cluster) DeleteCompute(ctx context.Context, name string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM computes WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("delete compute %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("compute %s: %w", name, ErrNotFound)
	}
	return nil
}
