package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// MLflow's view of runs (docs/mlflow.md). A job is inserted by CreateRun; a run that is not a
// job (a notebook logging through the MLflow API) by CreateTrackingRun, with is_job = 0, which
// keeps it out of the controller's lists (RunFilter.Active).

// attachTracking files a new job under its experiment (created when it is the first run of
// that name) and copies its spec's tags to its MLflow tags.
func attachTracking(ctx context.Context, tx *sql.Tx, r *job.Run) error {
	exp, err := experimentOf(ctx, tx, r.ExperimentName)
	if err != nil {
		return fmt.Errorf("experiment %q: %w", r.ExperimentName, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET experiment_id = ? WHERE id = ?`, exp, r.ID); err != nil {
		return err
	}
	for k, v := range r.Tags {
		if err := setRunTag(ctx, tx, r.ID, tracking.KV{Key: k, Value: v}); err != nil {
			return err
		}
	}
	return nil
}

// CreateTrackingRun inserts a run that is not a job into experiment expID (which must be
// active), with its user and tags.
func (s *RunWrites) CreateTrackingRun(ctx context.Context, r *job.Run, expID, userID string, tags []tracking.KV) error {
	exp, err := s.tracking.Experiment(ctx, expID)
	if err != nil {
		return err
	}
	if exp.LifecycleStage != "active" {
		return &tracking.Error{Message: fmt.Sprintf("The experiment %s must be in the 'active' state. Current state is %s.", expID, exp.LifecycleStage)}
	}
	r.ExperimentName = exp.Name
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	defer tx.Rollback()
	if err := insertRun(ctx, tx, r, ", is_job, experiment_id, user_id", false, exp.ID, userID); err != nil {
		return err
	}
	for _, t := range tags {
		if err := setRunTag(ctx, tx, r.ID, t); err != nil {
			return fmt.Errorf("create run %s: %w", r.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	return s.wal.sync()
}

// TrackingRun returns a run as MLflow shows it: info, latest metrics, params, tags, inputs
// (datasets and logged models) and outputs (logged models).
func (s *Tracking) TrackingRun(ctx context.Context, id string) (*tracking.Run, error) {
	runs, err := s.trackingRuns(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("Run with id=%s not found: %w", id, ErrNotFound)
	}
	return runs[0], s.runModels(ctx, runs[0])
}

// trackingRuns reads runs by id, in the order of ids (missing ones left out): five statements
// whatever the number of runs.
func (s *Tracking) trackingRuns(ctx context.Context, ids []string) ([]*tracking.Run, error) {
	idList, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	byID, err := s.runInfos(ctx, string(idList))
	if err != nil {
		return nil, err
	}
	if err := s.runData(ctx, string(idList), byID); err != nil {
		return nil, err
	}
	out := make([]*tracking.Run, 0, len(ids))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Tracking) runInfos(ctx context.Context, idList string) (map[string]*tracking.Run, error) {
	out, err := queryMap(ctx, s.db, scanTrackingRun, `SELECT id, display_name, description, status, created_at, started_at,
		ended_at, experiment_id, user_id, lifecycle_stage, is_job FROM runs WHERE id IN (`+s.dialect.jsonArrayValues()+`)`, idList)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return out, nil
}

// scanTrackingRun reads a row of runInfos: a run by its id, as MLflow shows it.
func scanTrackingRun(sc scanner) (string, *tracking.Run, error) {
	var r tracking.Run
	var desc, status string
	var created, exp int64
	var started, ended sql.NullInt64
	i := &r.Info
	if err := sc.Scan(&i.RunID, &i.RunName, &desc, &status, &created, &started, &ended, &exp, &i.UserID,
		&i.LifecycleStage, &r.IsJob); err != nil {
		return "", nil, err
	}
	i.RunUUID, i.ExperimentID = i.RunID, strconv.FormatInt(exp, 10)
	i.Status = tracking.StatusOf(job.State(status))
	i.StartTime = ms(created)
	if started.Valid {
		i.StartTime = ms(started.Int64)
	}
	if ended.Valid {
		e := ms(ended.Int64)
		i.EndTime = &e
	}
	i.ArtifactURI = tracking.ArtifactURI(i.ExperimentID, i.RunID)
	if i.RunName != "" {
		r.Data.Tags = append(r.Data.Tags, tracking.KV{Key: tracking.TagRunName, Value: i.RunName})
	}
	if desc != "" {
		r.Data.Tags = append(r.Data.Tags, tracking.KV{Key: tracking.TagNote, Value: desc})
	}
	return i.RunID, &r, nil
}

// runData fills the metrics, params, tags and inputs of runs.
func (s *Tracking) runData(ctx context.Context, idList string, runs map[string]*tracking.Run) error {
	in := ` WHERE run_id IN (` + s.dialect.jsonArrayValues() + `) ORDER BY run_id, `
	kvs := []struct {
		table string
		add   func(r *tracking.Run, kv tracking.KV)
	}{
		{"run_params", func(r *tracking.Run, kv tracking.KV) { r.Data.Params = append(r.Data.Params, kv) }},
		{"run_tags", func(r *tracking.Run, kv tracking.KV) { r.Data.Tags = append(r.Data.Tags, kv) }},
	}
	for _, t := range kvs {
		err := eachRow(ctx, s.db, `SELECT run_id, key, value FROM `+t.table+in+`key`, []any{idList}, func(sc scanner) error {
			var id string
			var kv tracking.KV
			if err := sc.Scan(&id, &kv.Key, &kv.Value); err != nil {
				return err
			}
			t.add(runs[id], kv)
			return nil
		})
		if err != nil {
			return fmt.Errorf("read %s: %w", t.table, err)
		}
	}
	err := eachRow(ctx, s.db, `SELECT run_id, name, value, step, time FROM latest_metrics`+in+`name`, []any{idList}, func(sc scanner) error {
		var id string
		var m tracking.MetricPoint
		if err := sc.Scan(&id, &m.Key, &m.Value, &m.Step, &m.Timestamp); err != nil {
			return err
		}
		m.Timestamp = ms(m.Timestamp)
		runs[id].Data.Metrics = append(runs[id].Data.Metrics, m)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read latest metrics: %w", err)
	}
	return s.runInputs(ctx, idList, in, runs)
}

func (s *Tracking) runInputs(ctx context.Context, idList, in string, runs map[string]*tracking.Run) error {
	err := eachRow(ctx, s.db, `SELECT run_id, dataset, tags FROM run_inputs`+in+`name, digest`, []any{idList}, func(sc scanner) error {
		var id, ds, tags string
		if err := sc.Scan(&id, &ds, &tags); err != nil {
			return err
		}
		var d tracking.DatasetInput
		if err := json.Unmarshal([]byte(ds), &d.Dataset); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(tags), &d.Tags); err != nil {
			return err
		}
		runs[id].Inputs.DatasetInputs = append(runs[id].Inputs.DatasetInputs, d)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read inputs: %w", err)
	}
	return nil
}

// UpdateTrackingRun applies runs/update (tracking.Update.Apply decides what changes).
func (s *RunWrites) UpdateTrackingRun(ctx context.Context, id string, u tracking.Update) error {
	isJob, err := s.tracking.RunIsJob(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("Run with id=%s not found: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("update run %s: %w", id, err)
	}
	_, err = s.UpdateRun(ctx, id, func(r *job.Run) ([]job.Event, error) {
		return u.Apply(r, isJob, timeNow()), nil
	})
	return err
}

// SetRunStage soft-deletes ("deleted") or restores ("active") a run.
func (s *RunWrites) SetRunStage(ctx context.Context, id, stage string) error {
	return execOne(ctx, s.db, "set stage of run "+id, "Run with id="+id+" not found",
		`UPDATE runs SET lifecycle_stage = ? WHERE id = ?`, stage, id)
}

// RunIsJob reports whether run id is a job (false: a run created through the MLflow API, which
// no backend executes).
func (s *Tracking) RunIsJob(ctx context.Context, id string) (bool, error) {
	var isJob bool
	if err := s.db.QueryRowContext(ctx, `SELECT is_job FROM runs WHERE id = ?`, id).Scan(&isJob); err != nil {
		return false, fmt.Errorf("run %s: %w", id, notFound(err))
	}
	return isJob, nil
}
