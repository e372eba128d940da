package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// RunEnd is what the removal of a run's directory needs to know of the run: its status, and
// when it ended (nil while it has not).
type RunEnd struct {
	Status  job.State
	EndedAt *time.Time
}

// RunEnds returns the status and end of the runs ids that exist (a deleted one is absent).
func (s *Runs) RunEnds(ctx context.Context, ids []string) (map[string]RunEnd, error) {
	out := make(map[string]RunEnd, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT id, status, ended_at FROM runs WHERE id IN (?`+
			strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read the ends of runs: %w", err)
		}
		if err := scanRunEnds(rows, out); err != nil {
			return nil, fmt.Errorf("read the ends of runs: %w", err)
		}
	}
	return out, nil
}

func scanRunEnds(rows *sql.Rows, out map[string]RunEnd) error {
	defer rows.Close()
	for rows.Next() {
		var id, status string
		var ended sql.NullInt64
		if err := rows.Scan(&id, &status, &ended); err != nil {
			return err
		}
		out[id] = RunEnd{Status: job.State(status), EndedAt: optTime(ended)}
	}
	return rows.Err()
}
