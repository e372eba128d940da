package store

import (
	"context"
	"fmt"
)

// RunCounts returns how many runs are in each status (an index scan of runs_status).
func (s *Runs) RunCounts(ctx context.Context) (map[string]int, error) {
	out, err := queryMap(ctx, s.db, scanPair[string, int], `SELECT status, COUNT(*) FROM runs GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	return out, nil
}

// NodeCount is how many of a cluster's nodes are in one state.
type NodeCount struct {
	Pool, State string
	N           int
}

// NodeCounts returns how many nodes each cluster has in each state.
func (s *Cluster) NodeCounts(ctx context.Context) ([]NodeCount, error) {
	out, err := queryAll(ctx, s.db, func(sc scanner) (c NodeCount, err error) {
		err = sc.Scan(&c.Pool, &c.State, &c.N)
		return c, err
	}, `SELECT pool, state, COUNT(*) FROM nodes GROUP BY pool, state ORDER BY pool, state`)
	if err != nil {
		return nil, fmt.Errorf("count nodes: %w", err)
	}
	return out, nil
}
