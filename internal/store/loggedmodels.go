package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/tracking"
)

// MLflow 3's logged models (docs/mlflow.md "Logged models"), kept with the run that produced
// them (logged_models.run_id: deleting the run deletes them). A deleted model keeps its row
// (deleted_at) and is found by nothing.

// CreateLoggedModel inserts m (its info, params and tags) into its experiment, which must be
// active; its source run, when named, must exist.
func (s *Tracking) CreateLoggedModel(ctx context.Context, m *tracking.LoggedModel, at time.Time) error {
	i := m.Info
	exp, err := s.Experiment(ctx, i.ExperimentID)
	if err != nil {
		return err
	}
	if exp.LifecycleStage != "active" {
		return &tracking.Error{Message: fmt.Sprintf("The experiment %s must be in the 'active' state. Current state is %s.", i.ExperimentID, exp.LifecycleStage)}
	}
	doing := "create logged model " + i.ModelID
	err = s.withTx(ctx, doing, func(tx *sql.Tx) error {
		var run any
		if i.SourceRunID != "" {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE id = ?`, i.SourceRunID).Scan(&n); err != nil {
				return fmt.Errorf("%s: %w", doing, err)
			}
			if n == 0 {
				return fmt.Errorf("Run with id=%s not found: %w", i.SourceRunID, ErrNotFound)
			}
			run = i.SourceRunID
		}
		status, _ := tracking.LoggedModelStatusOf(i.Status)
		if _, err := tx.ExecContext(ctx, `INSERT INTO logged_models (id, experiment_id, run_id, name, model_type, status,
			status_message, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			i.ModelID, exp.ID, run, i.Name, i.ModelType, status, i.StatusMessage, nanos(at), nanos(at)); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		if err := putModelKVs(ctx, tx, "logged_model_params", i.ModelID, m.Data.Params); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		if err := putModelKVs(ctx, tx, "logged_model_tags", i.ModelID, i.Tags); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.wal.sync()
}

// putModelKVs sets params or tags (table) of a model, replacing values of keys it has.
func putModelKVs(ctx context.Context, tx *sql.Tx, table, id string, kvs []tracking.KV) error {
	for _, kv := range kvs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (model_id, key, value) VALUES (?, ?, ?)
			ON CONFLICT (model_id, key) DO UPDATE SET value = excluded.value`, id, kv.Key, kv.Value); err != nil {
			return err
		}
	}
	return nil
}

// loggedModelWrite runs fn on a live model's row in one transaction, touching its update time;
// a model that is not there, or deleted, is ErrNotFound in MLflow's words.
func (s *Tracking) loggedModelWrite(ctx context.Context, id, doing string, fn func(tx *sql.Tx) error) error {
	err := s.withTx(ctx, doing, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE logged_models SET updated_at = ? WHERE id = ? AND deleted_at IS NULL`,
			nanos(time.Now()), id)
		if err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return loggedModelMissing(id)
		}
		if fn == nil {
			return nil
		}
		return fn(tx)
	})
	if err != nil {
		return err
	}
	return s.wal.sync()
}

func loggedModelMissing(id string) error {
	return fmt.Errorf("Logged model with ID '%s' not found.: %w", id, ErrNotFound)
}

// SetLoggedModelStatus sets a live model's status (finalize_logged_model).
func (s *Tracking) SetLoggedModelStatus(ctx context.Context, id string, status int, message string) error {
	return s.loggedModelWrite(ctx, id, "finalize logged model "+id, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE logged_models SET status = ?, status_message = ? WHERE id = ?`, status, message, id)
		return err
	})
}

// DeleteLoggedModel marks a live model deleted (MLflow's soft delete).
func (s *Tracking) DeleteLoggedModel(ctx context.Context, id string) error {
	return s.loggedModelWrite(ctx, id, "delete logged model "+id, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE logged_models SET deleted_at = updated_at WHERE id = ?`, id)
		return err
	})
}

// SetLoggedModelTags sets tags of a live model.
func (s *Tracking) SetLoggedModelTags(ctx context.Context, id string, tags []tracking.KV) error {
	return s.loggedModelWrite(ctx, id, "tag logged model "+id, func(tx *sql.Tx) error {
		return putModelKVs(ctx, tx, "logged_model_tags", id, tags)
	})
}

// LogLoggedModelParams sets params of a live model.
func (s *Tracking) LogLoggedModelParams(ctx context.Context, id string, params []tracking.KV) error {
	return s.loggedModelWrite(ctx, id, "log params of logged model "+id, func(tx *sql.Tx) error {
		return putModelKVs(ctx, tx, "logged_model_params", id, params)
	})
}

// DeleteLoggedModelTag deletes a tag of a live model; a tag that is not there is ErrNotFound,
// as MLflow answers it.
func (s *Tracking) DeleteLoggedModelTag(ctx context.Context, id, key string) error {
	return s.loggedModelWrite(ctx, id, "delete tag of logged model "+id, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM logged_model_tags WHERE model_id = ? AND key = ?`, id, key)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("No tag with key '%s' found for model with ID '%s'.: %w", key, id, ErrNotFound)
		}
		return nil
	})
}

// LogLoggedModelMetrics links metric points to live models (each point's ModelID); a point
// logged again (same model, key, step, timestamp and dataset) is kept once. Every model must be
// there, or nothing is written.
func (s *Tracking) LogLoggedModelMetrics(ctx context.Context, points []tracking.ModelMetric) error {
	if len(points) == 0 {
		return nil
	}
	err := s.withTx(ctx, "log logged model metrics", func(tx *sql.Tx) error {
		seen := map[string]bool{}
		for _, p := range points {
			if !seen[p.ModelID] {
				var n int
				if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM logged_models WHERE id = ? AND deleted_at IS NULL`,
					p.ModelID).Scan(&n); err != nil {
					return fmt.Errorf("log logged model metrics: %w", err)
				}
				if n == 0 {
					return loggedModelMissing(p.ModelID)
				}
				seen[p.ModelID] = true
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO logged_model_metrics (model_id, key, value, timestamp, step, run_id,
				dataset_name, dataset_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (model_id, key, step, timestamp, dataset_name, dataset_digest) DO UPDATE SET value = excluded.value`,
				p.ModelID, p.Key, p.Value, p.Timestamp, p.Step, p.RunID, p.DatasetName, p.DatasetDigest); err != nil {
				return fmt.Errorf("log metric %s of logged model %s: %w", p.Key, p.ModelID, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.wal.sync()
}

const loggedModelColumns = `id, experiment_id, run_id, name, model_type, status, status_message, created_at, updated_at`

func scanLoggedModel(sc scanner) (*tracking.LoggedModel, error) {
	var m tracking.LoggedModel
	i := &m.Info
	var exp, status, created, updated int64
	var run sql.NullString
	if err := sc.Scan(&i.ModelID, &exp, &run, &i.Name, &i.ModelType, &status, &i.StatusMessage, &created, &updated); err != nil {
		return nil, err
	}
	i.ExperimentID = strconv.FormatInt(exp, 10)
	i.SourceRunID = run.String
	i.Status = tracking.LoggedModelStatusName(int(status))
	i.CreationTimestampMs, i.LastUpdatedTimestampMs = ms(created), ms(updated)
	i.ArtifactURI = tracking.LoggedModelArtifactURI(i.ExperimentID, i.ModelID)
	return &m, nil
}

// LoggedModel returns a live model with its params, tags and metrics.
func (s *Tracking) LoggedModel(ctx context.Context, id string) (*tracking.LoggedModel, error) {
	ms, err := s.loggedModelsWhere(ctx, `id = ? AND deleted_at IS NULL`, id)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, loggedModelMissing(id)
	}
	return ms[0], nil
}

// MaxLoggedModelsRead bounds the models one search or one run's listing reads.
const MaxLoggedModelsRead = 50000

// LoggedModelQuery selects live models: those of the experiments, or those a run produced.
type LoggedModelQuery struct {
	ExperimentIDs []string
	RunID         string
}

// LoggedModels returns the live models q selects, oldest first, with their params, tags and
// metrics; more than MaxLoggedModelsRead is ErrTooMany.
func (s *Tracking) LoggedModels(ctx context.Context, q LoggedModelQuery) ([]*tracking.LoggedModel, error) {
	cond, arg := `run_id = ?`, any(q.RunID)
	if q.RunID == "" {
		ids := make([]int64, 0, len(q.ExperimentIDs))
		for _, id := range q.ExperimentIDs {
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				return nil, &tracking.Error{Message: fmt.Sprintf("Invalid value \"%s\" for parameter 'experiment_ids': experiment ids are integers", id)}
			}
			ids = append(ids, n)
		}
		b, err := json.Marshal(ids)
		if err != nil {
			return nil, err
		}
		cond, arg = `experiment_id IN (`+s.dialect.jsonArrayValues()+`)`, string(b)
		if s.dialect.postgres() {
			cond = `experiment_id IN (SELECT CAST(jsonb_array_elements_text(CAST(? AS jsonb)) AS BIGINT))`
		}
	}
	ms, err := s.loggedModelsWhere(ctx, cond+` AND deleted_at IS NULL`, arg)
	if err != nil {
		return nil, err
	}
	if len(ms) > MaxLoggedModelsRead {
		return nil, fmt.Errorf("more than %d logged models: %w", MaxLoggedModelsRead, ErrTooMany)
	}
	return ms, nil
}

func (s *Tracking) loggedModelsWhere(ctx context.Context, cond string, arg any) ([]*tracking.LoggedModel, error) {
	ms, err := queryAll(ctx, s.db, scanLoggedModel, `SELECT `+loggedModelColumns+` FROM logged_models WHERE `+cond+
		` ORDER BY created_at, id LIMIT ?`, arg, MaxLoggedModelsRead+1)
	if err != nil {
		return nil, fmt.Errorf("read logged models: %w", err)
	}
	if len(ms) == 0 {
		return ms, nil
	}
	byID := map[string]*tracking.LoggedModel{}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		byID[m.Info.ModelID] = m
		ids = append(ids, m.Info.ModelID)
	}
	idList, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	in := ` WHERE model_id IN (` + s.dialect.jsonArrayValues() + `) ORDER BY model_id, key`
	for _, t := range []struct {
		table string
		add   func(m *tracking.LoggedModel, kv tracking.KV)
	}{
		{"logged_model_params", func(m *tracking.LoggedModel, kv tracking.KV) { m.Data.Params = append(m.Data.Params, kv) }},
		{"logged_model_tags", func(m *tracking.LoggedModel, kv tracking.KV) { m.Info.Tags = append(m.Info.Tags, kv) }},
	} {
		err := eachRow(ctx, s.db, `SELECT model_id, key, value FROM `+t.table+in, []any{string(idList)}, func(sc scanner) error {
			var id string
			var kv tracking.KV
			if err := sc.Scan(&id, &kv.Key, &kv.Value); err != nil {
				return err
			}
			t.add(byID[id], kv)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read logged models' %s: %w", t.table, err)
		}
	}
	err = eachRow(ctx, s.db, `SELECT model_id, key, value, timestamp, step, run_id, dataset_name, dataset_digest
		FROM logged_model_metrics`+in+`, step, timestamp`, []any{string(idList)}, func(sc scanner) error {
		var p tracking.ModelMetric
		if err := sc.Scan(&p.ModelID, &p.Key, &p.Value, &p.Timestamp, &p.Step, &p.RunID, &p.DatasetName, &p.DatasetDigest); err != nil {
			return err
		}
		m := byID[p.ModelID]
		m.Data.Metrics = append(m.Data.Metrics, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read logged models' metrics: %w", err)
	}
	return ms, nil
}

// Directions of a run's models (run_logged_models.direction).
const (
	ModelInput  = "input"
	ModelOutput = "output"
)

// LogRunModels records models a run used (ModelInput) or produced (ModelOutput, at a step);
// each must be a live model. Recording one again is no change.
func (s *Tracking) LogRunModels(ctx context.Context, runID, direction string, models []tracking.ModelIO) error {
	if len(models) == 0 {
		return nil
	}
	doing := "log models of run " + runID
	err := s.withTx(ctx, doing, func(tx *sql.Tx) error {
		for _, m := range models {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM logged_models WHERE id = ? AND deleted_at IS NULL`,
				m.ModelID).Scan(&n); err != nil {
				return fmt.Errorf("%s: %w", doing, err)
			}
			if n == 0 {
				return loggedModelMissing(m.ModelID)
			}
			var step int64
			if m.Step != nil && direction == ModelOutput {
				step = *m.Step
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_logged_models (run_id, direction, model_id, step) VALUES (?, ?, ?, ?)
				ON CONFLICT (run_id, direction, model_id, step) DO NOTHING`, runID, direction, m.ModelID, step); err != nil {
				return fmt.Errorf("%s: %w", doing, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.wal.sync()
}

// runModels fills a run's model inputs and outputs, in the order they were first logged.
func (s *Tracking) runModels(ctx context.Context, r *tracking.Run) error {
	err := eachRow(ctx, s.db, `SELECT direction, model_id, step FROM run_logged_models WHERE run_id = ?
		ORDER BY direction, model_id, step`, []any{r.Info.RunID}, func(sc scanner) error {
		var dir string
		var m tracking.ModelIO
		var step int64
		if err := sc.Scan(&dir, &m.ModelID, &step); err != nil {
			return err
		}
		if dir == ModelInput {
			r.Inputs.ModelInputs = append(r.Inputs.ModelInputs, m)
			return nil
		}
		m.Step = &step
		if r.Outputs == nil {
			r.Outputs = &tracking.RunOutputs{}
		}
		r.Outputs.ModelOutputs = append(r.Outputs.ModelOutputs, m)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read models of run %s: %w", r.Info.RunID, err)
	}
	return nil
}
