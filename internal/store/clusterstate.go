package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// PoolState is a managed cluster's decision state, kept across restarts: its provisioning
// failure record (Failures, LastFailure: the backoff), the last provisioning failure (the runs
// waiting for nodes show it until a node joins), the last error, and the last scaling decision
// (for compute show).
type PoolState struct {
	Pool           string
	Failures       int
	LastFailure    time.Time
	ProvisionError string
	LastError      string
	Target         int
	Current        int
	Explain        []string
	UpdatedAt      time.Time
}

// PoolState returns a cluster's state; ok is false when none was recorded.
func (s *Cluster) PoolState(ctx context.Context, pool string) (st PoolState, ok bool, err error) {
	row := s.db.QueryRowContext(ctx, `SELECT pool, failures, last_failure, provision_error, last_error, target_nodes,
		current_nodes, explain, updated_at FROM cluster_state WHERE pool = ?`, pool)
	st, err = scanPoolState(row)
	if errors.Is(err, sql.ErrNoRows) {
		return PoolState{Pool: pool}, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("read state of cluster %s: %w", pool, err)
	}
	return st, true, nil
}

// PoolStates returns every cluster's recorded state, by cluster.
func (s *Cluster) PoolStates(ctx context.Context) (map[string]PoolState, error) {
	out, err := queryMap(ctx, s.db, func(sc scanner) (string, PoolState, error) {
		st, err := scanPoolState(sc)
		return st.Pool, st, err
	}, `SELECT pool, failures, last_failure, provision_error, last_error, target_nodes,
		current_nodes, explain, updated_at FROM cluster_state`)
	if err != nil {
		return nil, fmt.Errorf("read cluster states: %w", err)
	}
	return out, nil
}

// PutPoolState records a cluster's state, replacing what was there.
func (s *Cluster) PutPoolState(ctx context.Context, st PoolState) error {
	explain, err := json.Marshal(nonNilSlice(st.Explain))
	if err != nil {
		return fmt.Errorf("record state of cluster %s: %w", st.Pool, err)
	}
	return execStmt(ctx, s.db, "record state of cluster "+st.Pool,
		`INSERT INTO cluster_state (pool, failures, last_failure, provision_error, last_error,
		target_nodes, current_nodes, explain, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (pool) DO UPDATE SET failures = excluded.failures, last_failure = excluded.last_failure,
			provision_error = excluded.provision_error, last_error = excluded.last_error,
			target_nodes = excluded.target_nodes, current_nodes = excluded.current_nodes,
			explain = excluded.explain, updated_at = excluded.updated_at`,
		st.Pool, st.Failures, optZero(st.LastFailure), st.ProvisionError, st.LastError, st.Target, st.Current,
		string(explain), nanos(st.UpdatedAt))
}

// DeletePoolState forgets a cluster's state (the cluster was deleted).
func (s *Cluster) DeletePoolState(ctx context.Context, pool string) error {
	return execStmt(ctx, s.db, "forget state of cluster "+pool, `DELETE FROM cluster_state WHERE pool = ?`, pool)
}

func scanPoolState(sc scanner) (PoolState, error) {
	var st PoolState
	var last sql.NullInt64
	var explain string
	var updated int64
	if err := sc.Scan(&st.Pool, &st.Failures, &last, &st.ProvisionError, &st.LastError, &st.Target, &st.Current,
		&explain, &updated); err != nil {
		return st, err
	}
	st.LastFailure, st.UpdatedAt = zeroTime(last), fromNanos(updated)
	if err := json.Unmarshal([]byte(explain), &st.Explain); err != nil {
		return st, fmt.Errorf("decode state of cluster %s: %w", st.Pool, err)
	}
	if len(st.Explain) == 0 {
		st.Explain = nil
	}
	return st, nil
}
