package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
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
		in, args := inIDs(chunk)
		ends, err := queryMap(ctx, s.db, scanRunEnd, `SELECT id, status, ended_at FROM runs WHERE id `+in, args...)
		if err != nil {
			return nil, fmt.Errorf("read the ends of runs: %w", err)
		}
		maps.Copy(out, ends)
	}
	return out, nil
}

func scanRunEnd(sc scanner) (id string, e RunEnd, err error) {
	var status string
	var ended sql.NullInt64
	err = sc.Scan(&id, &status, &ended)
	return id, RunEnd{Status: job.State(status), EndedAt: optTime(ended)}, err
}
