package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/tracking"
)

// MLflow experiments (migration 0008). Ids are integers in the table and strings on the wire;
// experiment 0 is "Default".

// DefaultExperiment is the name of experiment 0.
const DefaultExperiment = "Default"

func ms(n int64) int64 { return n / int64(time.Millisecond) }

// experimentID parses an experiment id; one that is not a number does not exist.
func experimentID(id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("No Experiment with id=%s exists: %w", id, ErrNotFound)
	}
	return n, nil
}

// CreateExperiment creates an experiment; a name in use (deleted experiments included) is
// ErrExists, as MLflow's.
func (s *Tracking) CreateExperiment(ctx context.Context, name, artifactLocation string, tags []tracking.KV) (string, error) {
	doing := "create experiment " + name
	var id int64
	err := s.withTx(ctx, doing, func(tx *sql.Tx) (err error) {
		if id, err = insertExperiment(ctx, tx, name, artifactLocation); err != nil {
			return err
		}
		for _, t := range tags {
			if err := setExperimentTag(ctx, tx, id, t); err != nil {
				return fmt.Errorf("%s: %w", doing, err)
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(id, 10), nil
}

func insertExperiment(ctx context.Context, q querier, name, artifactLocation string) (int64, error) {
	now := nanos(time.Now())
	var id int64
	err := q.QueryRowContext(ctx, `INSERT INTO experiments (name, artifact_location, created_at, updated_at)
		VALUES (?, ?, ?, ?) RETURNING id`, name, artifactLocation, now, now).Scan(&id)
	if err != nil {
		if isUniqueViolation(err) {
			return 0, fmt.Errorf("Experiment '%s' already exists.: %w", name, ErrExists)
		}
		return 0, fmt.Errorf("create experiment %s: %w", name, err)
	}
	return id, nil
}

// experimentOf returns the id of the experiment named name, creating it when there is none
// (a job's experiment_name is its experiment); "" is Default.
func experimentOf(ctx context.Context, q querier, name string) (int64, error) {
	if name == "" {
		return 0, nil
	}
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM experiments WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return insertExperiment(ctx, q, name, "")
	}
	return id, err
}

// Experiment returns one experiment with its tags.
func (s *Tracking) Experiment(ctx context.Context, id string) (*tracking.Experiment, error) {
	n, err := experimentID(id)
	if err != nil {
		return nil, err
	}
	return s.experimentWhere(ctx, `id = ?`, n, "No Experiment with id="+id+" exists")
}

// ExperimentByName returns the experiment named name.
func (s *Tracking) ExperimentByName(ctx context.Context, name string) (*tracking.Experiment, error) {
	return s.experimentWhere(ctx, `name = ?`, name, "Could not find experiment with name '"+name+"'")
}

const experimentColumns = `id, name, artifact_location, lifecycle_stage, created_at, updated_at`

func (s *Tracking) experimentWhere(ctx context.Context, cond string, arg any, missing string) (*tracking.Experiment, error) {
	e, err := scanExperiment(s.db.QueryRowContext(ctx, `SELECT `+experimentColumns+` FROM experiments WHERE `+cond, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", missing, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read experiment %v: %w", arg, err)
	}
	if err := s.experimentTags(ctx, []*tracking.Experiment{e}); err != nil {
		return nil, err
	}
	return e, nil
}

func scanExperiment(sc scanner) (*tracking.Experiment, error) {
	var e tracking.Experiment
	var id, created, updated int64
	if err := sc.Scan(&id, &e.Name, &e.ArtifactLocation, &e.LifecycleStage, &created, &updated); err != nil {
		return nil, err
	}
	e.ID = strconv.FormatInt(id, 10)
	if e.ArtifactLocation == "" {
		e.ArtifactLocation = "mlflow-artifacts:/" + e.ID
	}
	e.CreationTime, e.LastUpdateTime = ms(created), ms(updated)
	return &e, nil
}

func (s *Tracking) experimentTags(ctx context.Context, es []*tracking.Experiment) error {
	for _, e := range es {
		var err error
		e.Tags, err = queryAll(ctx, s.db, scanKV, `SELECT key, value FROM experiment_tags WHERE experiment_id = ? ORDER BY key`, e.ID)
		if err != nil {
			return fmt.Errorf("read tags of experiment %s: %w", e.ID, err)
		}
	}
	return nil
}

func scanKV(sc scanner) (kv tracking.KV, err error) {
	err = sc.Scan(&kv.Key, &kv.Value)
	return kv, err
}

// ExperimentQuery selects experiments for SearchExperiments.
type ExperimentQuery struct {
	Stages []string // lifecycle stages
	// Where and Args are a condition on the table experiments (tracking.ExperimentFilter).
	Where  string
	Args   []any
	Order  string // ORDER BY list
	Offset int
	Limit  int
}

// SearchExperiments returns a page of experiments and whether more follow.
func (s *Tracking) SearchExperiments(ctx context.Context, q ExperimentQuery) ([]*tracking.Experiment, bool, error) {
	args := []any{}
	for _, st := range q.Stages {
		args = append(args, st)
	}
	stmt := `SELECT ` + experimentColumns + ` FROM experiments WHERE lifecycle_stage IN (?` +
		strings.Repeat(", ?", len(q.Stages)-1) + `) AND ` + q.Where + ` ORDER BY ` + q.Order + ` LIMIT ? OFFSET ?`
	args = append(append(args, q.Args...), q.Limit+1, q.Offset)
	out, err := queryAll(ctx, s.db, scanExperiment, stmt, args...)
	if err != nil {
		return nil, false, fmt.Errorf("search experiments: %w", err)
	}
	out, more := page(out, q.Limit)
	return out, more, s.experimentTags(ctx, out)
}

// RenameExperiment renames an experiment; the runs of a job keep their experiment by id.
func (s *Tracking) RenameExperiment(ctx context.Context, id, name string) error {
	n, err := experimentID(id)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE experiments SET name = ?, updated_at = ? WHERE id = ?`, name, nanos(time.Now()), n)
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("Experiment '%s' already exists.: %w", name, ErrExists)
		}
		return fmt.Errorf("rename experiment %s: %w", id, err)
	}
	return affected(res, "No Experiment with id="+id+" exists")
}

// SetExperimentStage soft-deletes ("deleted") or restores ("active") an experiment.
func (s *Tracking) SetExperimentStage(ctx context.Context, id, stage string) error {
	n, err := experimentID(id)
	if err != nil {
		return err
	}
	return execOne(ctx, s.db, "set stage of experiment "+id, "No Experiment with id="+id+" exists",
		`UPDATE experiments SET lifecycle_stage = ?, updated_at = ? WHERE id = ?`, stage, nanos(time.Now()), n)
}

// SetExperimentTag sets one tag of an experiment.
func (s *Tracking) SetExperimentTag(ctx context.Context, id string, t tracking.KV) error {
	n, err := experimentID(id)
	if err != nil {
		return err
	}
	if _, err := s.Experiment(ctx, id); err != nil {
		return err
	}
	if err := setExperimentTag(ctx, s.db, n, t); err != nil {
		return fmt.Errorf("tag experiment %s: %w", id, err)
	}
	return nil
}

func setExperimentTag(ctx context.Context, q querier, id int64, t tracking.KV) error {
	_, err := q.ExecContext(ctx, `INSERT INTO experiment_tags (experiment_id, key, value) VALUES (?, ?, ?)
		ON CONFLICT (experiment_id, key) DO UPDATE SET value = excluded.value`, id, t.Key, t.Value)
	return err
}

func timeNow() time.Time { return time.Now().UTC() }
