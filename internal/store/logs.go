package store

import (
	"context"
	"fmt"

	"github.com/hangar-ml/hangar/internal/job"
)

// AppendLogs stores consecutive log lines of one file of a run. Lines already stored are ignored
// (shipping is retried), so the call is idempotent. It returns the highest sequence number up to which
// the file has no gap: a batch that starts after a gap stores nothing and the caller resends from there.
func (s *Runs) AppendLogs(ctx context.Context, runID, file string, lines []job.LogLine) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("append logs of %s: %w", runID, err)
	}
	defer tx.Rollback()
	var have int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM log_lines WHERE run_id = ? AND file = ?`,
		runID, file).Scan(&have); err != nil {
		return 0, fmt.Errorf("append logs of %s: %w", runID, err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO log_lines (run_id, file, seq, time, text) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return 0, fmt.Errorf("append logs of %s: %w", runID, err)
	}
	defer stmt.Close()
	for _, l := range lines {
		if l.Seq <= have {
			continue
		}
		if l.Seq != have+1 {
			break
		}
		if _, err := stmt.ExecContext(ctx, runID, file, l.Seq, nanos(l.Time), l.Text); err != nil {
			return 0, fmt.Errorf("append logs of %s: %w", runID, err)
		}
		have = l.Seq
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("append logs of %s: %w", runID, err)
	}
	return have, nil
}

// Logs returns up to limit lines of a run's log file after sequence number after.
func (s *Runs) Logs(ctx context.Context, runID, file string, after int64, limit int) ([]job.LogLine, error) {
	out, err := queryAll(ctx, s.db, scanLogLine,
		`SELECT seq, time, text FROM log_lines WHERE run_id = ? AND file = ? AND seq > ? ORDER BY seq LIMIT ?`,
		runID, file, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read logs of %s: %w", runID, err)
	}
	return out, nil
}

func scanLogLine(sc scanner) (l job.LogLine, err error) {
	var t int64
	err = sc.Scan(&l.Seq, &t, &l.Text)
	l.Time = fromNanos(t)
	return l, err
}

// LogTail returns the last n lines of a run's log file, oldest first.
func (s *Runs) LogTail(ctx context.Context, runID, file string, n int) ([]job.LogLine, error) {
	var max int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM log_lines WHERE run_id = ? AND file = ?`,
		runID, file).Scan(&max); err != nil {
		return nil, fmt.Errorf("read log tail of %s: %w", runID, err)
	}
	after := max - int64(n)
	if after < 0 {
		after = 0
	}
	return s.Logs(ctx, runID, file, after, n)
}

// ArchiveLogs renames a run's log files to <prefix>/<file>, so that a new attempt starts its logs
// afresh while the old attempt's lines stay readable.
func (s *Runs) ArchiveLogs(ctx context.Context, runID, prefix string) error {
	return execStmt(ctx, s.db, "archive logs of "+runID,
		`UPDATE log_lines SET file = ? || '/' || file WHERE run_id = ? AND file NOT LIKE 'attempt\_%' ESCAPE '\'`,
		prefix, runID)
}
