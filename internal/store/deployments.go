package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// PutDeployment creates a deployment (generation 1) or replaces its definition, raising its
// generation so that its replicas are replaced. Its endpoint must exist. A replacement given a
// Generation replaces only that generation (ErrNotFound if another write came first).
func (s *Serving) PutDeployment(ctx context.Context, d DeploymentRecord, create bool) (*DeploymentRecord, error) {
	spec, err := json.Marshal(d.Spec)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("deployment %s of endpoint %s", d.Spec.Name, d.Spec.Endpoint)
	if create {
		d.Generation = 1
	}
	err = s.withTx(ctx, "put "+what, func(tx *sql.Tx) error {
		if err := requireRow(ctx, tx, "endpoints", "endpoint "+d.Spec.Endpoint, d.Spec.Endpoint); err != nil {
			return err
		}
		err := putRow(ctx, tx, what, create,
			stmt{`INSERT INTO deployments (endpoint, name, spec, generation, state, reason, created_at, updated_at)
				VALUES (?, ?, ?, 1, ?, ?, ?, ?)`,
				[]any{d.Spec.Endpoint, d.Spec.Name, string(spec), d.State, d.Reason, nanos(d.CreatedAt), nanos(d.UpdatedAt)}},
			stmt{`UPDATE deployments SET spec = ?, generation = generation + 1, state = ?, reason = ?, updated_at = ?
				WHERE endpoint = ? AND name = ? AND (? = 0 OR generation = ?)`,
				[]any{string(spec), d.State, d.Reason, nanos(d.UpdatedAt), d.Spec.Endpoint, d.Spec.Name, d.Generation, d.Generation}})
		if err != nil || create {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT generation FROM deployments WHERE endpoint = ? AND name = ?`,
			d.Spec.Endpoint, d.Spec.Name).Scan(&d.Generation)
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// SetDeploymentState records a deployment's provisioning state and why, and (unless "") the
// last replica run that ended on its own.
func (s *Serving) SetDeploymentState(ctx context.Context, endpoint, name, state, reason, lastFailed string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE deployments SET state = ?, reason = ?,
		last_failed = CASE WHEN ? = '' THEN last_failed ELSE ? END WHERE endpoint = ? AND name = ?`,
		state, reason, lastFailed, lastFailed, endpoint, name)
	return err
}

// Deployment reads one deployment.
func (s *Serving) Deployment(ctx context.Context, endpoint, name string) (*DeploymentRecord, error) {
	d, err := scanDeployment(s.db.QueryRowContext(ctx, `SELECT spec, generation, state, reason, last_failed, created_at, updated_at
		FROM deployments WHERE endpoint = ? AND name = ?`, endpoint, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("deployment %s of endpoint %s: %w", name, endpoint, ErrNotFound)
	}
	return d, err
}

// Deployments lists an endpoint's deployments ("": every endpoint's), by endpoint and name.
func (s *Serving) Deployments(ctx context.Context, endpoint string) ([]DeploymentRecord, error) {
	const cols = `SELECT spec, generation, state, reason, last_failed, created_at, updated_at FROM deployments`
	q, args := cols+` ORDER BY endpoint, name`, []any{}
	if endpoint != "" {
		q, args = cols+` WHERE endpoint = ? ORDER BY name`, []any{endpoint}
	}
	return queryAll(ctx, s.db, values(scanDeployment), q, args...)
}

// DeleteDeployment removes a deployment (its replicas' rows stay until their runs end).
func (s *Serving) DeleteDeployment(ctx context.Context, endpoint, name string) error {
	what := fmt.Sprintf("deployment %s of endpoint %s", name, endpoint)
	return execOne(ctx, s.db, "delete "+what, what, `DELETE FROM deployments WHERE endpoint = ? AND name = ?`, endpoint, name)
}

func scanDeployment(sc scanner) (*DeploymentRecord, error) {
	var d DeploymentRecord
	var spec string
	var created, updated int64
	if err := sc.Scan(&spec, &d.Generation, &d.State, &d.Reason, &d.LastFailed, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(spec), &d.Spec); err != nil {
		return nil, fmt.Errorf("deployment spec: %w", err)
	}
	d.CreatedAt, d.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &d, nil
}

// AddReplica records a run as a deployment's replica.
func (s *Serving) AddReplica(ctx context.Context, r Replica) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO replicas (run_id, endpoint, deployment, generation, address, created_at)
		VALUES (?, ?, ?, ?, '', ?)`, r.RunID, r.Endpoint, r.Deployment, r.Generation, nanos(r.CreatedAt))
	return err
}

// SetReplicaAddress records where a replica answers.
func (s *Serving) SetReplicaAddress(ctx context.Context, runID, address string) error {
	return execOne(ctx, s.db, "record the address of replica "+runID, "replica "+runID,
		`UPDATE replicas SET address = ? WHERE run_id = ?`, address, runID)
}

// DeleteReplica forgets a replica (its run ended).
func (s *Serving) DeleteReplica(ctx context.Context, runID string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM replicas WHERE run_id = ?`, runID)
	return err
}

// Replicas lists every replica, oldest first.
func (s *Serving) Replicas(ctx context.Context) ([]Replica, error) {
	return queryAll(ctx, s.db, scanReplica, `SELECT run_id, endpoint, deployment, generation, address, created_at
		FROM replicas ORDER BY created_at, run_id`)
}

func scanReplica(sc scanner) (r Replica, err error) {
	var created int64
	err = sc.Scan(&r.RunID, &r.Endpoint, &r.Deployment, &r.Generation, &r.Address, &created)
	r.CreatedAt = fromNanos(created)
	return r, err
}
