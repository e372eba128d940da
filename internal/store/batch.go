package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
)

// BatchEndpointRecord is a batch endpoint as stored.
type BatchEndpointRecord struct {
	Spec      serving.BatchEndpoint
	CreatedAt time.Time
	UpdatedAt time.Time
}

// BatchDeploymentRecord is a batch deployment as stored.
type BatchDeploymentRecord struct {
	Spec      serving.BatchDeployment
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PutBatchEndpoint creates a batch endpoint (create: ErrExists if it exists) or replaces its
// definition (ErrNotFound if it does not).
func (s *Serving) PutBatchEndpoint(ctx context.Context, e BatchEndpointRecord, create bool) error {
	spec, err := json.Marshal(e.Spec)
	if err != nil {
		return err
	}
	return putRow(ctx, s.db, "batch endpoint "+e.Spec.Name, create,
		stmt{`INSERT INTO batch_endpoints (name, spec, created_at, updated_at) VALUES (?, ?, ?, ?)`,
			[]any{e.Spec.Name, string(spec), nanos(e.CreatedAt), nanos(e.UpdatedAt)}},
		stmt{`UPDATE batch_endpoints SET spec = ?, updated_at = ? WHERE name = ?`,
			[]any{string(spec), nanos(e.UpdatedAt), e.Spec.Name}})
}

// BatchEndpoint reads one batch endpoint.
func (s *Serving) BatchEndpoint(ctx context.Context, name string) (*BatchEndpointRecord, error) {
	var e BatchEndpointRecord
	err := scanSpec(s.db.QueryRowContext(ctx, `SELECT spec, created_at, updated_at FROM batch_endpoints WHERE name = ?`, name),
		&e.Spec, &e.CreatedAt, &e.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("batch endpoint %s: %w", name, ErrNotFound)
	}
	return &e, err
}

// BatchEndpoints lists the batch endpoints by name.
func (s *Serving) BatchEndpoints(ctx context.Context) ([]BatchEndpointRecord, error) {
	return queryAll(ctx, s.db, scanBatchEndpoint, `SELECT spec, created_at, updated_at FROM batch_endpoints ORDER BY name`)
}

func scanBatchEndpoint(sc scanner) (e BatchEndpointRecord, err error) {
	err = scanSpec(sc, &e.Spec, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

// DeleteBatchEndpoint removes a batch endpoint and its deployments (its jobs stay).
func (s *Serving) DeleteBatchEndpoint(ctx context.Context, name string) error {
	return s.deleteWithChildren(ctx, "batch_deployments", "batch_endpoints", "batch endpoint", name)
}

// PutBatchDeployment creates a batch deployment (create) or replaces its definition; its
// endpoint must exist (ErrNotFound).
func (s *Serving) PutBatchDeployment(ctx context.Context, d BatchDeploymentRecord, create bool) error {
	spec, err := json.Marshal(d.Spec)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("batch deployment %s of %s", d.Spec.Name, d.Spec.Endpoint)
	return s.withTx(ctx, "put "+what, func(tx *sql.Tx) error {
		if err := requireRow(ctx, tx, "batch_endpoints", "batch endpoint "+d.Spec.Endpoint, d.Spec.Endpoint); err != nil {
			return err
		}
		return putRow(ctx, tx, what, create,
			stmt{`INSERT INTO batch_deployments (endpoint, name, spec, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
				[]any{d.Spec.Endpoint, d.Spec.Name, string(spec), nanos(d.CreatedAt), nanos(d.UpdatedAt)}},
			stmt{`UPDATE batch_deployments SET spec = ?, updated_at = ? WHERE endpoint = ? AND name = ?`,
				[]any{string(spec), nanos(d.UpdatedAt), d.Spec.Endpoint, d.Spec.Name}})
	})
}

// BatchDeployment reads one batch deployment.
func (s *Serving) BatchDeployment(ctx context.Context, endpoint, name string) (*BatchDeploymentRecord, error) {
	var d BatchDeploymentRecord
	err := scanSpec(s.db.QueryRowContext(ctx, `SELECT spec, created_at, updated_at FROM batch_deployments WHERE endpoint = ? AND name = ?`,
		endpoint, name), &d.Spec, &d.CreatedAt, &d.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("batch deployment %s of %s: %w", name, endpoint, ErrNotFound)
	}
	return &d, err
}

// BatchDeployments lists a batch endpoint's deployments by name.
func (s *Serving) BatchDeployments(ctx context.Context, endpoint string) ([]BatchDeploymentRecord, error) {
	return queryAll(ctx, s.db, scanBatchDeployment,
		`SELECT spec, created_at, updated_at FROM batch_deployments WHERE endpoint = ? ORDER BY name`, endpoint)
}

func scanBatchDeployment(sc scanner) (d BatchDeploymentRecord, err error) {
	err = scanSpec(sc, &d.Spec, &d.CreatedAt, &d.UpdatedAt)
	return d, err
}

// DeleteBatchDeployment removes a batch deployment (its jobs stay).
func (s *Serving) DeleteBatchDeployment(ctx context.Context, endpoint, name string) error {
	what := fmt.Sprintf("batch deployment %s of %s", name, endpoint)
	return execOne(ctx, s.db, "delete "+what, what, `DELETE FROM batch_deployments WHERE endpoint = ? AND name = ?`, endpoint, name)
}

// scanSpec reads a (spec JSON, created, updated) row.
func scanSpec(sc scanner, spec any, created, updated *time.Time) error {
	var text string
	var c, u int64
	if err := sc.Scan(&text, &c, &u); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(text), spec); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	*created, *updated = fromNanos(c), fromNanos(u)
	return nil
}
