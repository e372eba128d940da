package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hangar-ml/hangar/internal/job"
)

// Trial is one trial of a sweep as stored: its index, its run (nil once the run was deleted),
// its parameters (JSON) and why the sweep stopped it ("" if it did not).
type Trial struct {
	Parent  string
	Index   int
	RunID   string
	Params  json.RawMessage
	Stopped string
	Run     *job.Run
}

// SweepOutcome is a sweep's best trial so far and why it ended.
type SweepOutcome struct {
	BestRunID  string
	BestIndex  int // -1: none yet
	BestParams json.RawMessage
	BestMetric *float64
	DoneReason string
}

// ErrTrialExists is CreateTrial's answer when the sweep already has a trial of that index.
var ErrTrialExists = errors.New("trial exists")

// CreateSweep creates a sweep's parent run and its outcome row, in one transaction.
func (s *RunWrites) CreateSweep(ctx context.Context, r *job.Run, events ...job.Event) error {
	return s.createParent(ctx, "create sweep "+r.ID, sweepsTable, r, events)
}

// CreateTrial creates a trial's run and its row in one transaction. A trial of that index
// already there is ErrTrialExists (and nothing is written), so a trial is created once; a run
// of that name is ErrExists.
func (s *RunWrites) CreateTrial(ctx context.Context, parent string, index int, params json.RawMessage, r *job.Run, events ...job.Event) error {
	exists := fmt.Errorf("trial %d of %s: %w", index, parent, ErrTrialExists)
	row := childRow{
		absent: func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sweep_trials WHERE parent = ? AND idx = ?`, parent, index).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return exists
			}
			return nil
		},
		insert: func(tx *sql.Tx) error {
			// The key is checked again by the insert: two writers cannot both create the trial.
			_, err := tx.ExecContext(ctx, `INSERT INTO sweep_trials (parent, idx, run_id, params) VALUES (?, ?, ?, ?)`,
				parent, index, r.ID, string(params))
			if isUniqueViolation(err) {
				return exists
			}
			return err
		},
	}
	return s.createChild(ctx, fmt.Sprintf("create trial %d of %s", index, parent), row, r, events)
}

// inTx is withTx whose fn's errors are about what too (but for ErrExists and ErrTrialExists,
// which say what exists), and whose commit is on the disk when it returns.
func (s *base) inTx(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	err := s.withTx(ctx, what, func(tx *sql.Tx) error {
		err := fn(tx)
		if err != nil && !errors.Is(err, ErrExists) && !errors.Is(err, ErrTrialExists) {
			return fmt.Errorf("%s: %w", what, err)
		}
		return err
	})
	if err != nil {
		return err
	}
	return s.wal.sync()
}

// Trials returns a sweep's trials in index order, each with its run.
func (s *Parents) Trials(ctx context.Context, parent string) ([]Trial, error) {
	out, err := queryAll(ctx, s.db, func(sc scanner) (t Trial, err error) {
		var params string
		err = sc.Scan(&t.Parent, &t.Index, &t.RunID, &params, &t.Stopped)
		t.Params = json.RawMessage(params)
		return t, err
	}, `SELECT parent, idx, run_id, params, stopped FROM sweep_trials WHERE parent = ? ORDER BY idx`, parent)
	if err != nil {
		return nil, fmt.Errorf("read trials of %s: %w", parent, err)
	}
	err = attachRuns(ctx, s.runs, out, func(c *Trial) (string, **job.Run) { return c.RunID, &c.Run })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ActiveSweeps lists the sweeps that have not ended, oldest first.
func (s *Parents) ActiveSweeps(ctx context.Context) ([]*job.Run, error) {
	return s.activeParents(ctx, sweepsTable)
}

// TrialOf returns the trial a run is, if it is one.
func (s *Parents) TrialOf(ctx context.Context, runID string) (Trial, bool, error) {
	t := Trial{RunID: runID}
	var params string
	err := s.db.QueryRowContext(ctx, `SELECT parent, idx, params, stopped FROM sweep_trials WHERE run_id = ?`, runID).
		Scan(&t.Parent, &t.Index, &params, &t.Stopped)
	if errors.Is(err, sql.ErrNoRows) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("read trial %s: %w", runID, err)
	}
	t.Params = json.RawMessage(params)
	return t, true, nil
}

// ParentsOf maps each of ids that is a trial to its sweep and index (job list).
func (s *Parents) ParentsOf(ctx context.Context, ids []string) (map[string]Trial, error) {
	out := map[string]Trial{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := inIDs(ids)
	out, err := queryMap(ctx, s.db, func(sc scanner) (id string, t Trial, err error) {
		err = sc.Scan(&t.RunID, &t.Parent, &t.Index)
		return t.RunID, t, err
	}, `SELECT run_id, parent, idx FROM sweep_trials WHERE run_id `+in, args...)
	if err != nil {
		return nil, fmt.Errorf("read trials' parents: %w", err)
	}
	return out, nil
}

// StopTrial records why the sweep stopped a trial (the first reason stays).
func (s *Parents) StopTrial(ctx context.Context, parent string, index int, reason string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sweep_trials SET stopped = ? WHERE parent = ? AND idx = ? AND stopped = ''`,
		reason, parent, index)
	if err != nil {
		return fmt.Errorf("stop trial %d of %s: %w", index, parent, err)
	}
	return s.wal.sync()
}

// SweepOutcome reads a sweep's outcome; ErrNotFound when id is not a sweep.
func (s *Parents) SweepOutcome(ctx context.Context, id string) (SweepOutcome, error) {
	var o SweepOutcome
	var params string
	var metric sql.NullFloat64
	err := s.db.QueryRowContext(ctx, `SELECT best_run_id, best_index, best_params, best_metric, done_reason FROM sweeps WHERE run_id = ?`, id).
		Scan(&o.BestRunID, &o.BestIndex, &params, &metric, &o.DoneReason)
	if errors.Is(err, sql.ErrNoRows) {
		return o, fmt.Errorf("sweep %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return o, fmt.Errorf("read sweep %s: %w", id, err)
	}
	o.BestParams = json.RawMessage(params)
	if metric.Valid {
		o.BestMetric = &metric.Float64
	}
	return o, nil
}

// SetSweepOutcome records a sweep's best trial and why it ended (DoneReason "" while not).
func (s *Parents) SetSweepOutcome(ctx context.Context, id string, o SweepOutcome) error {
	params := string(o.BestParams)
	if params == "" {
		params = "{}"
	}
	var metric any
	if o.BestMetric != nil {
		metric = *o.BestMetric
	}
	return execStmt(ctx, s.db, "record sweep "+id,
		`UPDATE sweeps SET best_run_id = ?, best_index = ?, best_params = ?, best_metric = ?, done_reason = ? WHERE run_id = ?`,
		o.BestRunID, o.BestIndex, params, metric, o.DoneReason, id)
}

// MetricSeries returns one metric's points of a run in report order (step, then time): both
// writers' (the metrics file and MLflow).
func (s *Parents) MetricSeries(ctx context.Context, runID, name string) ([]job.Metric, error) {
	out, err := queryAll(ctx, s.db, scanMetric,
		`SELECT seq, name, value, step, time FROM metrics WHERE run_id = ? AND name = ? ORDER BY step, time, src, seq`, runID, name)
	if err != nil {
		return nil, fmt.Errorf("read metric %s of %s: %w", name, runID, err)
	}
	return out, nil
}
