package store

import (
	"context"
	"fmt"

	"github.com/hangar-ml/hangar/internal/job"
)

// AppendMetrics stores metrics of a run, idempotently (a metric's seq is its line in the run's
// metrics file, so invalid lines leave gaps); it returns the highest sequence number stored.
func (s *Runs) AppendMetrics(ctx context.Context, runID string, ms []job.Metric) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("append metrics of %s: %w", runID, err)
	}
	defer tx.Rollback()
	var have int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM metrics WHERE run_id = ? AND src = 0`, runID).Scan(&have); err != nil {
		return 0, fmt.Errorf("append metrics of %s: %w", runID, err)
	}
	for _, m := range ms {
		res, err := tx.ExecContext(ctx,
			`INSERT INTO metrics (run_id, src, seq, name, value, step, time) VALUES (?, 0, ?, ?, ?, ?, ?)
			 ON CONFLICT (run_id, src, seq) DO NOTHING`,
			runID, m.Seq, m.Name, m.Value, m.Step, nanos(m.Time))
		if err != nil {
			return 0, fmt.Errorf("append metrics of %s: %w", runID, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if err := updateLatest(ctx, tx, runID, m.Name, m.Value, m.Step, nanos(m.Time)); err != nil {
				return 0, fmt.Errorf("append metrics of %s: %w", runID, err)
			}
		}
		have = max(have, m.Seq)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("append metrics of %s: %w", runID, err)
	}
	return have, nil
}

// Metrics returns a run's metric history in time order: the lines of its metrics file and
// what MLflow clients logged (store.LogBatch), one history.
func (s *Runs) Metrics(ctx context.Context, runID string) ([]job.Metric, error) {
	out, err := queryAll(ctx, s.db, scanMetric,
		`SELECT seq, name, value, step, time FROM metrics WHERE run_id = ? ORDER BY time, src, seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", runID, err)
	}
	return out, nil
}

func scanMetric(sc scanner) (m job.Metric, err error) {
	var t int64
	err = sc.Scan(&m.Seq, &m.Name, &m.Value, &m.Step, &t)
	m.Time = fromNanos(t)
	return m, err
}

// LastMetrics returns each metric's final value (the point of the highest step, then the latest
// time, then the one logged last; latest_metrics), the value search filters on:
// job show, job list, compare and the MLflow API agree on what "the last value" is.
func (s *Runs) LastMetrics(ctx context.Context, runID string) (map[string]float64, error) {
	all, err := s.LastMetricsOf(ctx, []string{runID})
	if err != nil {
		return nil, err
	}
	if all[runID] == nil {
		return map[string]float64{}, nil
	}
	return all[runID], nil
}
