package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// Step is one pipeline step as stored. A step with a run (RunID) takes its state from the run;
// one without (reused from the step cache, or skipped) has State "completed" or "skipped".
type Step struct {
	Pipeline   string
	Name       string
	RunID      string
	State      string
	ReusedFrom string
	CacheKey   string
	Reason     string
	CreatedAt  time.Time
	Run        *job.Run // nil when the step has no run, or its run was deleted
}

// ErrStepExists is the answer of CreateStep and PutStep when the pipeline already has a row for
// that step: a step is started (or reused, or skipped) once.
var ErrStepExists = errors.New("step exists")

// CreatePipeline creates a pipeline's parent run and its outcome row, in one transaction.
func (s *RunWrites) CreatePipeline(ctx context.Context, r *job.Run, events ...job.Event) error {
	return s.createParent(ctx, "create pipeline "+r.ID, pipelinesTable, r, events)
}

// CreateStep creates a step's run and its row in one transaction. A row for that step already
// there is ErrStepExists (and nothing is written); a run of that name is ErrExists.
func (s *RunWrites) CreateStep(ctx context.Context, st Step, r *job.Run, events ...job.Event) error {
	st.RunID = r.ID
	row := childRow{
		absent: func(tx *sql.Tx) error { return stepAbsent(ctx, tx, st) },
		insert: func(tx *sql.Tx) error {
			if err := insertStep(ctx, tx, st); err != nil {
				return err
			}
			if r.Spec.Sweep != nil { // a sweep step is a sweep: the sweep loop drives it
				return insertParentRow(ctx, tx, sweepsTable, r.ID)
			}
			return nil
		},
	}
	return s.createChild(ctx, "create step "+st.Name+" of "+st.Pipeline, row, r, events)
}

// PutStep records a step that has no run of its own: reused from the step cache (State
// "completed", ReusedFrom set) or skipped (State "skipped", Reason set). ErrStepExists when the
// step has a row already.
func (s *Parents) PutStep(ctx context.Context, st Step) error {
	st.RunID = ""
	return s.inTx(ctx, "record step "+st.Name+" of "+st.Pipeline, func(tx *sql.Tx) error {
		if err := stepAbsent(ctx, tx, st); err != nil {
			return err
		}
		return insertStep(ctx, tx, st)
	})
}

func stepAbsent(ctx context.Context, tx *sql.Tx, st Step) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pipeline_steps WHERE pipeline = ? AND step = ?`, st.Pipeline, st.Name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("step %s of %s: %w", st.Name, st.Pipeline, ErrStepExists)
	}
	return nil
}

func insertStep(ctx context.Context, tx *sql.Tx, st Step) error {
	// The key is checked again by the insert: two writers cannot both create the step.
	_, err := tx.ExecContext(ctx, `INSERT INTO pipeline_steps (pipeline, step, run_id, state, reused_from, cache_key, reason, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, st.Pipeline, st.Name, st.RunID, st.State, st.ReusedFrom, st.CacheKey, st.Reason, nanos(st.CreatedAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("step %s of %s: %w", st.Name, st.Pipeline, ErrStepExists)
	}
	return err
}

// SetStepReason records why the pipeline canceled a step (the first reason stays).
func (s *Parents) SetStepReason(ctx context.Context, pipeline, step, reason string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE pipeline_steps SET reason = ? WHERE pipeline = ? AND step = ? AND reason = ''`,
		reason, pipeline, step)
	if err != nil {
		return fmt.Errorf("record step %s of %s: %w", step, pipeline, err)
	}
	return s.wal.sync()
}

const stepColumns = `pipeline, step, run_id, state, reused_from, cache_key, reason, created_at`

func scanStep(sc scanner) (Step, error) {
	var st Step
	var created int64
	err := sc.Scan(&st.Pipeline, &st.Name, &st.RunID, &st.State, &st.ReusedFrom, &st.CacheKey, &st.Reason, &created)
	st.CreatedAt = fromNanos(created)
	return st, err
}

func (s *Parents) querySteps(ctx context.Context, what, query string, args ...any) ([]Step, error) {
	out, err := queryAll(ctx, s.db, scanStep, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return out, nil
}

// PipelineSteps returns a pipeline's stored steps by name order, each with its run.
func (s *Parents) PipelineSteps(ctx context.Context, pipeline string) ([]Step, error) {
	out, err := s.querySteps(ctx, "steps of "+pipeline,
		`SELECT `+stepColumns+` FROM pipeline_steps WHERE pipeline = ? ORDER BY step`, pipeline)
	if err != nil {
		return nil, err
	}
	err = attachRuns(ctx, s.runs, out, func(c *Step) (string, **job.Run) { return c.RunID, &c.Run })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// StepOf returns the pipeline step a run is, if it is one.
func (s *Parents) StepOf(ctx context.Context, runID string) (Step, bool, error) {
	out, err := s.querySteps(ctx, "step "+runID, `SELECT `+stepColumns+` FROM pipeline_steps WHERE run_id = ?`, runID)
	if err != nil || len(out) == 0 || runID == "" {
		return Step{}, false, err
	}
	return out[0], true, nil
}

// StepsOf maps each of ids that is a pipeline step's run to its step (job list).
func (s *Parents) StepsOf(ctx context.Context, ids []string) (map[string]Step, error) {
	out := map[string]Step{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := inIDs(ids)
	steps, err := s.querySteps(ctx, "steps' pipelines", `SELECT `+stepColumns+` FROM pipeline_steps WHERE run_id `+in, args...)
	for _, st := range steps {
		out[st.RunID] = st
	}
	return out, err
}

// CachedStep is the step cache: the newest completed run of a step with that cache key, across
// the workspace's pipelines, whose run still exists ("" when none).
func (s *Parents) CachedStep(ctx context.Context, key string) (string, error) {
	if key == "" {
		return "", nil
	}
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT s.run_id FROM pipeline_steps s JOIN runs r ON r.id = s.run_id
		WHERE s.cache_key = ? AND s.run_id <> '' AND r.status = 'Completed'
		ORDER BY r.ended_at DESC, r.id LIMIT 1`, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the step cache: %w", err)
	}
	return id, nil
}

// ActivePipelines lists the pipelines that have not ended, oldest first.
func (s *Parents) ActivePipelines(ctx context.Context) ([]*job.Run, error) {
	return s.activeParents(ctx, pipelinesTable)
}

// PipelineReason reads why a pipeline ended ("" while it runs); ErrNotFound when id is not one.
func (s *Parents) PipelineReason(ctx context.Context, id string) (string, error) {
	var reason string
	err := s.db.QueryRowContext(ctx, `SELECT done_reason FROM pipelines WHERE run_id = ?`, id).Scan(&reason)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("pipeline %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read pipeline %s: %w", id, err)
	}
	return reason, nil
}

// SetPipelineReason records why a pipeline ended.
func (s *Parents) SetPipelineReason(ctx context.Context, id, reason string) error {
	return execStmt(ctx, s.db, "record pipeline "+id,
		`UPDATE pipelines SET done_reason = ? WHERE run_id = ?`, reason, id)
}
