package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/tracking"
)

// RunQuery selects runs for SearchRuns: the compiled filter and order of a search
// (tracking.Filter.WhereSQL, tracking.OrderSQL) and a page.
type RunQuery struct {
	ExperimentIDs []int64
	Stages        []string
	Where         string
	WhereArgs     []any
	Order         tracking.Order
	Offset, Limit int
}

// SearchRuns returns a page of runs as MLflow shows them, and whether more follow.
func (s *Tracking) SearchRuns(ctx context.Context, q RunQuery) ([]*tracking.Run, bool, error) {
	if len(q.ExperimentIDs) == 0 || len(q.Stages) == 0 {
		return nil, false, nil
	}
	stmt, args := searchStatement(q)
	ids, err := queryAll(ctx, s.db, scanValue[string], stmt, args...)
	if err != nil {
		return nil, false, fmt.Errorf("search runs: %w", err)
	}
	ids, more := page(ids, q.Limit)
	runs, err := s.trackingRuns(ctx, ids)
	return runs, more, err
}

// searchStatement is the statement of SearchRuns: the ids of a page of runs (one more, to know
// whether more follow).
func searchStatement(q RunQuery) (string, []any) {
	stmt := `SELECT runs.id FROM runs` + q.Order.Joins +
		` WHERE runs.experiment_id IN (?` + strings.Repeat(", ?", len(q.ExperimentIDs)-1) + `)` +
		` AND runs.lifecycle_stage IN (?` + strings.Repeat(", ?", len(q.Stages)-1) + `)` +
		` AND ` + q.Where + ` ORDER BY ` + q.Order.By + ` LIMIT ? OFFSET ?`
	args := append([]any{}, q.Order.JoinArgs...)
	for _, id := range q.ExperimentIDs {
		args = append(args, id)
	}
	for _, st := range q.Stages {
		args = append(args, st)
	}
	args = append(append(args, q.WhereArgs...), q.Limit+1, q.Offset)
	return stmt, args
}
