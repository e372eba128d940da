package store

import (
	"context"
	"fmt"
)

// RunCounts returns how many runs are in each status (an index scan of runs_status).
func (s *Runs) RunCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT status, COUNT(*) FROM runs GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		out[st] = n
	}
	return out, rows.Err()
}

// NodeCount is how many of a cluster's nodes are in one state.
type NodeCount struct {
	Pool, State string
	N           int
}

// NodeCounts returns how many nodes each cluster has in each state.
func (s *Cluster) NodeCounts(ctx context.Context) ([]NodeCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT pool, state, COUNT(*) FROM nodes GROUP BY pool, state ORDER BY pool, state`)
	if err != nil {
		return nil, fmt.Errorf("count nodes: %w", err)
	}
	defer rows.Close()
	var out []NodeCount
	for rows.Next() {
		var c NodeCount
		if err := rows.Scan(&c.Pool, &c.State, &c.N); err != nil {
			return nil, fmt.Errorf("count nodes: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
