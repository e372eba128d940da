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
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM metrics WHERE run_id = ?`, runID).Scan(&have); err != nil {
		return 0, fmt.Errorf("append metrics of %s: %w", runID, err)
	}
	for _, m := range ms {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO metrics (run_id, seq, name, value, step, time) VALUES (?, ?, ?, ?, ?, ?)
			 ON CONFLICT (run_id, seq) DO NOTHING`,
			runID, m.Seq, m.Name, m.Value, m.Step, nanos(m.Time)); err != nil {
			return 0, fmt.Errorf("append metrics of %s: %w", runID, err)
		}
		have = max(have, m.Seq)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("append metrics of %s: %w", runID, err)
	}
	return have, nil
}

// Metrics returns a run's metric history in logging order.
func (s *Store) Metrics(ctx context.Context, runID string) ([]job.Metric, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT seq, name, value, step, time FROM metrics WHERE run_id = ? ORDER BY seq`, runID)
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

// LastMetrics returns each metric's most recently logged value.
func (s *Store) LastMetrics(ctx context.Context, runID string) (map[string]float64, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT m.name, m.value FROM metrics m
		JOIN (SELECT name, MAX(seq) AS seq FROM metrics WHERE run_id = ? GROUP BY name) last
		  ON last.name = m.name AND last.seq = m.seq
		WHERE m.run_id = ?`, runID, runID)
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
