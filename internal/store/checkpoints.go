package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// Checkpoint is the latest good checkpoint of a run: the manifest of the files saved from its
// HANGAR_CHECKPOINT_DIR by an attempt.
type Checkpoint struct {
	RunID    string
	Attempt  int
	Manifest string
	Files    int
	Bytes    int64
	// SavedAt is when the supervisor read the folder; CommittedAt when the server took it.
	SavedAt, CommittedAt time.Time
}

// CommitCheckpoint makes cp the run's latest checkpoint, in one conditional statement: only
// while the run is active and on cp's attempt (a stale supervisor's save is refused, ErrStale),
// and never over a checkpoint saved later (a retried, delayed commit does not go back in time).
// Callers commit only checkpoints whose files are all stored.
func (s *Runs) CommitCheckpoint(ctx context.Context, cp Checkpoint) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO run_checkpoints (run_id, attempt, manifest, files, bytes, saved_at, committed_at)
		SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM runs WHERE id = ? AND (CASE WHEN attempt > 1 THEN attempt ELSE 1 END) = ? AND status NOT IN (?, ?, ?))
		ON CONFLICT (run_id) DO UPDATE SET attempt = excluded.attempt, manifest = excluded.manifest,
			files = excluded.files, bytes = excluded.bytes, saved_at = excluded.saved_at,
			committed_at = excluded.committed_at
		WHERE excluded.saved_at >= run_checkpoints.saved_at`,
		cp.RunID, cp.Attempt, cp.Manifest, cp.Files, cp.Bytes, nanos(cp.SavedAt), nanos(cp.CommittedAt),
		cp.RunID, cp.Attempt, job.Completed, job.Failed, job.Canceled)
	if err != nil {
		return fmt.Errorf("commit checkpoint of %s: %w", cp.RunID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		latest, lerr := s.LatestCheckpoint(ctx, cp.RunID)
		if lerr == nil && latest.Attempt == cp.Attempt && !latest.SavedAt.Before(cp.SavedAt) {
			return nil // the same or a newer save is in already: a retry
		}
		return fmt.Errorf("commit checkpoint of %s (attempt %d): %w", cp.RunID, cp.Attempt, ErrStale)
	}
	return nil
}

// LatestCheckpoint is a run's latest good checkpoint (ErrNotFound: none yet).
func (s *Runs) LatestCheckpoint(ctx context.Context, runID string) (*Checkpoint, error) {
	cp := Checkpoint{RunID: runID}
	var saved, committed int64
	err := s.db.QueryRowContext(ctx, `SELECT attempt, manifest, files, bytes, saved_at, committed_at
		FROM run_checkpoints WHERE run_id = ?`, runID).
		Scan(&cp.Attempt, &cp.Manifest, &cp.Files, &cp.Bytes, &saved, &committed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint of %s: %w", runID, err)
	}
	cp.SavedAt, cp.CommittedAt = fromNanos(saved), fromNanos(committed)
	return &cp, nil
}

// Preemption is one attempt of a run that lost its node to preemption, with what the loss
// is judged from.
type Preemption struct {
	Attempt int
	Node    string
	At      time.Time
	// StartedAt is when the attempt's command started (nil: it never did); CheckpointAt the
	// saved checkpoint the next attempt resumes from (nil: none).
	StartedAt, CheckpointAt *time.Time
}

// SetPreemptionLoss records, for a preempted attempt, when its command had started and which
// checkpoint the next attempt resumes from. An attempt not recorded as preempted (a requeue
// for another reason) is left alone.
func (s *Runs) SetPreemptionLoss(ctx context.Context, runID string, attempt int, started, checkpoint *time.Time) error {
	return execStmt(ctx, s.db, "record the loss of "+runID+"'s preemption",
		`UPDATE run_preemptions SET started_at = ?, checkpoint_at = ?
		WHERE run_id = ? AND attempt = ?`, optNanos(started), optNanos(checkpoint), runID, attempt)
}

// RunPreemptions lists a run's preemptions, oldest first.
func (s *Runs) RunPreemptions(ctx context.Context, runID string) ([]Preemption, error) {
	out, err := queryAll(ctx, s.db, scanPreemption, `SELECT attempt, node_id, at, started_at, checkpoint_at
		FROM run_preemptions WHERE run_id = ? ORDER BY attempt`, runID)
	if err != nil {
		return nil, fmt.Errorf("read preemptions of %s: %w", runID, err)
	}
	return out, nil
}

func scanPreemption(sc scanner) (p Preemption, err error) {
	var at int64
	var started, cp sql.NullInt64
	err = sc.Scan(&p.Attempt, &p.Node, &at, &started, &cp)
	p.At, p.StartedAt, p.CheckpointAt = fromNanos(at), optTime(started), optTime(cp)
	return p, err
}
