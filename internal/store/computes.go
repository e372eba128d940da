package store

import (
	"context"
	"fmt"

	"github.com/hangar-ml/hangar/internal/compute"
)

// PutCompute creates or replaces a compute target.
func (s *Cluster) PutCompute(ctx context.Context, t compute.Target) error {
	return s.insertCompute(ctx, "put", t, `DO UPDATE SET type = excluded.type, description = excluded.description,
		properties = excluded.properties`)
}

// EnsureCompute creates a compute target unless one with that name exists.
func (s *Cluster) EnsureCompute(ctx context.Context, t compute.Target) error {
	return s.insertCompute(ctx, "ensure", t, `DO NOTHING`)
}

// insertCompute inserts t's row; onConflict is what an existing row of that name gets (doing
// says what the caller does, for its error).
func (s *Cluster) insertCompute(ctx context.Context, doing string, t compute.Target, onConflict string) error {
	props := string(t.Properties)
	if props == "" {
		props = "{}"
	}
	return execStmt(ctx, s.db, doing+" compute "+t.Name, `
		INSERT INTO computes (name, type, description, properties, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) `+onConflict,
		t.Name, t.Type, t.Description, props, nanos(t.CreatedAt))
}

// Compute returns one compute target.
func (s *Cluster) Compute(ctx context.Context, name string) (*compute.Target, error) {
	return getOne(s.db.QueryRowContext(ctx,
		`SELECT name, type, description, properties, created_at FROM computes WHERE name = ?`, name), scanCompute, "compute", name)
}

// Computes lists the compute targets by name.
func (s *Cluster) Computes(ctx context.Context) ([]compute.Target, error) {
	out, err := queryAll(ctx, s.db, values(scanCompute),
		`SELECT name, type, description, properties, created_at FROM computes ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list computes: %w", err)
	}
	return out, nil
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
	return execOne(ctx, s.db, "delete compute "+name, "compute "+name, `DELETE FROM computes WHERE name = ?`, name)
}
