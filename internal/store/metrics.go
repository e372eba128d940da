package store

import (
	"context"
	"fmt"

	"github.com/hangar-ml/hangar/internal/job"
)

// AppendMetrics stores metrics of a run, idempotently (a metric's seq is its line in the run's
// metrics file, so invalid lines leave gaps); it returns the highest sequence number stored.
func (s *Store) AppendMetrics(ctx context.Context, runID string, ms []job.Metric) (int64, error) {
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
func (s *Store) Metrics(ctx context.Context, runID string) ([]job.Metric, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT seq, name, value, step, time FROM metrics WHERE run_id = ? ORDER BY time, src, seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", runID, err)
	}
	defer rows.Close()
	var out []job.Metric
	for rows.Next() {
		var m job.Metric
		var t int64
		if err := rows.Scan(&m.Seq, &m.Name, &m.Value, &m.Step, &t); err != nil {
			return nil, fmt.Errorf("read metrics of %s: %w", runID, err)
		}
		m.Time = fromNanos(t)
		out = append(out, m)
	}
	return out, rows.Err()
}

// LastMetrics returns each metric's most recently logged value (of either writer).
func (s *Store) LastMetrics(ctx context.Context, runID string) (map[string]float64, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT name, value FROM (
			SELECT name, value, ROW_NUMBER() OVER (PARTITION BY name ORDER BY time DESC, src DESC, seq DESC) AS k
			FROM metrics WHERE run_id = ?) WHERE k = 1`, runID)
	if err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", runID, err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name string
		var v float64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, fmt.Errorf("read metrics of %s: %w", runID, err)
		}
		out[name] = v
	}
	return out, rows.Err()
}
