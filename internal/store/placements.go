package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// SetPlacement records where attempt of a run was placed (its nodes in rank order and GPUs),
// replacing an earlier attempt's placement. It is conditional in one statement: a run that ended
// or moved on to another attempt meanwhile is not placed (ErrStale).
func (s *Cluster) SetPlacement(ctx context.Context, runID string, attempt int, p job.Placement, at time.Time) error {
	nodes, err := json.Marshal(nonNilSlice(p.Nodes))
	if err != nil {
		return fmt.Errorf("place run %s: %w", runID, err)
	}
	gpus := []byte("{}")
	if len(p.GPUs) > 0 {
		if gpus, err = json.Marshal(p.GPUs); err != nil {
			return fmt.Errorf("place run %s: %w", runID, err)
		}
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO run_placements (run_id, attempt, nodes, gpus, placed_at)
		SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM runs WHERE id = ? AND attempt = ? AND status NOT IN (?, ?, ?))
		ON CONFLICT (run_id) DO UPDATE SET attempt = excluded.attempt, nodes = excluded.nodes,
			gpus = excluded.gpus, placed_at = excluded.placed_at`,
		runID, attempt, string(nodes), string(gpus), nanos(at), runID, attempt, job.Completed, job.Failed, job.Canceled)
	if err != nil {
		return fmt.Errorf("place run %s: %w", runID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("place run %s (attempt %d): %w", runID, attempt, ErrStale)
	}
	return nil
}

// ClearPlacement forgets the placement of a run's attempt (it could not be submitted there and
// is placed again); another attempt's placement is left alone.
func (s *Cluster) ClearPlacement(ctx context.Context, runID string, attempt int) error {
	return execStmt(ctx, s.db, "clear placement of "+runID,
		`DELETE FROM run_placements WHERE run_id = ? AND attempt = ?`, runID, attempt)
}

// decodePlacement decodes a row of run_placements (scanRun reads it with its run).
func decodePlacement(nodes, gpus string) (*job.Placement, error) {
	var p job.Placement
	if err := json.Unmarshal([]byte(nodes), &p.Nodes); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(gpus), &p.GPUs); err != nil {
		return nil, err
	}
	if len(p.GPUs) == 0 {
		p.GPUs = nil
	}
	return &p, nil
}

// RecordPreemption records that attempt of a run lost its node to preemption; recording the
// same attempt again changes nothing.
func (s *Cluster) RecordPreemption(ctx context.Context, runID string, attempt int, nodeID string, at time.Time) error {
	return execStmt(ctx, s.db, "record preemption of "+runID,
		`INSERT INTO run_preemptions (run_id, attempt, node_id, at) VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id, attempt) DO NOTHING`, runID, attempt, nodeID, nanos(at))
}

// Preemptions counts, for every active run preempted at least once, the attempts it lost to
// preemption.
func (s *Cluster) Preemptions(ctx context.Context) (map[string]int, error) {
	out, err := queryMap(ctx, s.db, scanPair[string, int], `SELECT p.run_id, COUNT(*) FROM run_preemptions p JOIN runs r ON r.id = p.run_id
		WHERE r.status NOT IN (?, ?, ?) GROUP BY p.run_id`, job.Completed, job.Failed, job.Canceled)
	if err != nil {
		return nil, fmt.Errorf("read preemptions: %w", err)
	}
	return out, nil
}
