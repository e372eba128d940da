package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hangar-ml/hangar/internal/tracking"
)

// What MLflow clients log to a run. Metrics join the history that supervisors write from the
// run's metrics file (metrics.src 1, numbered after the run's last MLflow point), and each
// point updates latest_metrics by MLflow's rule.

// Batch is one log-batch: any of metrics, params and tags.
type Batch struct {
	Metrics []tracking.MetricPoint
	Params  []tracking.KV
	Tags    []tracking.KV
}

// LogBatch writes a batch to run id: all of it or nothing. A param logged again with another
// value is refused, as MLflow refuses it.
//
// Concurrent batches are committed together (group commit): the caller that takes the queue
// writes every batch waiting in it in one transaction; a batch is checked whole before any of
// it is written, so that a refused batch writes nothing and the others go on. Fifty writers
// otherwise queue for SQLite's write lock one commit each, or meet in its busy handler, which
// sleeps instead of queueing. (Savepoints would undo a batch too, but write each change to a
// sub-journal file: a third of the time.)
func (s *RunWrites) LogBatch(ctx context.Context, id string, b Batch) error {
	r := &logRequest{run: id, batch: b, done: make(chan error, 1)}
	q := &s.logs
	q.mu.Lock()
	q.pending = append(q.pending, r)
	q.mu.Unlock()
	q.writer.Lock()
	defer q.writer.Unlock()
	select {
	case err := <-r.done: // a batch written by the caller before
		return err
	default:
	}
	q.mu.Lock()
	reqs := q.pending
	q.pending = nil
	q.mu.Unlock()
	s.writeBatches(context.WithoutCancel(ctx), reqs)
	return <-r.done
}

// logQueue holds the batches waiting for the writer.
type logQueue struct {
	writer  sync.Mutex // held by the caller that writes the queue
	mu      sync.Mutex // guards pending
	pending []*logRequest
}

type logRequest struct {
	run   string
	batch Batch
	done  chan error
}

// writeBatches writes batches in one transaction and answers each.
func (s *RunWrites) writeBatches(ctx context.Context, reqs []*logRequest) {
	errs := make([]error, len(reqs))
	err := func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for i, r := range reqs {
			if errs[i] = checkBatch(ctx, tx, r.run, r.batch); errs[i] != nil {
				if isUserError(errs[i]) {
					continue
				}
				return errs[i]
			}
			if err := writeBatch(ctx, tx, r.run, r.batch); err != nil {
				return err
			}
		}
		return tx.Commit()
	}()
	for i, r := range reqs {
		if err != nil {
			errs[i] = fmt.Errorf("log to run %s: %w", r.run, err)
		}
		r.done <- errs[i]
	}
}

// isUserError reports whether a batch failed for what it asked (an unknown run, a changed
// param), not for the database: the other batches of the transaction go on.
func isUserError(err error) bool {
	var te *tracking.Error
	return errors.Is(err, ErrNotFound) || errors.As(err, &te)
}

// checkBatch refuses a batch that cannot be written whole: to a run that does not exist or
// was deleted, or changing a param's value.
func checkBatch(ctx context.Context, tx *sql.Tx, id string, b Batch) error {
	if err := activeRun(ctx, tx, id); err != nil {
		return err
	}
	for _, p := range b.Params {
		if err := checkParam(ctx, tx, id, p); err != nil {
			return err
		}
	}
	return nil
}

func writeBatch(ctx context.Context, tx *sql.Tx, id string, b Batch) error {
	if err := logMetrics(ctx, tx, id, b.Metrics); err != nil {
		return fmt.Errorf("log metrics to run %s: %w", id, err)
	}
	for _, p := range b.Params {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_params (run_id, key, value) VALUES (?, ?, ?)
			ON CONFLICT (run_id, key) DO NOTHING`, id, p.Key, p.Value); err != nil {
			return fmt.Errorf("log param %s to run %s: %w", p.Key, id, err)
		}
	}
	for _, t := range b.Tags {
		if err := setRunTag(ctx, tx, id, t); err != nil {
			return fmt.Errorf("tag run %s: %w", id, err)
		}
	}
	return nil
}

// activeRun checks that a run exists and is not deleted (MLflow's _check_run_is_active).
func activeRun(ctx context.Context, q querier, id string) error {
	var stage string
	err := q.QueryRowContext(ctx, `SELECT lifecycle_stage FROM runs WHERE id = ?`, id).Scan(&stage)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("Run with id=%s not found: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read run %s: %w", id, err)
	}
	if stage != "active" {
		return &tracking.Error{Message: fmt.Sprintf("The run %s must be in the 'active' state. Current state is %s.", id, stage)}
	}
	return nil
}

// metricChunk is how many points one INSERT writes: a batch of 10 (what clients send most)
// is two statements, not twenty. The statement's text is fixed, so it is prepared once.
const metricChunk = 10

var (
	insertMetrics = `INSERT INTO metrics (run_id, src, seq, name, value, step, time) VALUES ` +
		strings.TrimSuffix(strings.Repeat(`(?, 1, ?, ?, ?, ?, ?), `, metricChunk), ", ")
	upsertLatest = `INSERT INTO latest_metrics (run_id, name, value, step, time) VALUES ` +
		strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?), `, metricChunk), ", ") + latestRule
)

// latestRule keeps a metric's latest point: the highest step, then the latest timestamp, as
// MLflow's rule; between points of the same step and timestamp, the one logged last (MLflow,
// which has no logging order, takes the highest value: a metric file of losses without steps,
// shipped in one batch, would then report its first and worst loss as the last). SQLite applies
// it row by row, so points of the same metric in one statement are compared in their order.
const latestRule = ` ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value, step = excluded.step, time = excluded.time
	WHERE (excluded.step, excluded.time) >= (latest_metrics.step, latest_metrics.time)`

func logMetrics(ctx context.Context, tx querier, id string, ms []tracking.MetricPoint) error {
	if len(ms) == 0 {
		return nil
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM metrics WHERE run_id = ? AND src = 1`, id).Scan(&seq); err != nil {
		return err
	}
	for len(ms) >= metricChunk {
		var rows, latest []any
		for _, m := range ms[:metricChunk] {
			seq++
			t := m.Timestamp * 1e6
			rows = append(rows, id, seq, m.Key, m.Value, m.Step, t)
			latest = append(latest, id, m.Key, m.Value, m.Step, t)
		}
		if _, err := tx.ExecContext(ctx, insertMetrics, rows...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, upsertLatest, latest...); err != nil {
			return err
		}
		ms = ms[metricChunk:]
	}
	for _, m := range ms {
		seq++
		t := m.Timestamp * 1e6
		if _, err := tx.ExecContext(ctx, `INSERT INTO metrics (run_id, src, seq, name, value, step, time) VALUES (?, 1, ?, ?, ?, ?, ?)`,
			id, seq, m.Key, m.Value, m.Step, t); err != nil {
			return err
		}
		if err := updateLatest(ctx, tx, id, m.Key, m.Value, m.Step, t); err != nil {
			return err
		}
	}
	return nil
}

// updateLatest applies latestRule to one point.
func updateLatest(ctx context.Context, q querier, id, name string, value float64, step, t int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO latest_metrics (run_id, name, value, step, time) VALUES (?, ?, ?, ?, ?)`+latestRule,
		id, name, value, step, t)
	return err
}

func checkParam(ctx context.Context, q querier, id string, p tracking.KV) error {
	var have string
	err := q.QueryRowContext(ctx, `SELECT value FROM run_params WHERE run_id = ? AND key = ?`, id, p.Key).Scan(&have)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("log param %s to run %s: %w", p.Key, id, err)
	case have != p.Value:
		return &tracking.Error{Message: fmt.Sprintf("Changing param values is not allowed. Param with key='%s' was already logged with value='%s' for run ID='%s'. Attempted logging new value '%s'.", p.Key, have, id, p.Value)}
	}
	return nil
}

// setRunTag sets a tag; the run's name and description are columns of the run (what job show
// and the studio show), written through their MLflow tags.
func setRunTag(ctx context.Context, q querier, id string, t tracking.KV) error {
	var err error
	switch t.Key {
	case tracking.TagRunName:
		_, err = q.ExecContext(ctx, `UPDATE runs SET display_name = ? WHERE id = ?`, t.Value, id)
	case tracking.TagNote:
		_, err = q.ExecContext(ctx, `UPDATE runs SET description = ? WHERE id = ?`, t.Value, id)
	default:
		_, err = q.ExecContext(ctx, `INSERT INTO run_tags (run_id, key, value) VALUES (?, ?, ?)
			ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value`, id, t.Key, t.Value)
	}
	return err
}

// DeleteRunTag removes a tag of a run.
func (s *RunWrites) DeleteRunTag(ctx context.Context, id, key string) error {
	if err := activeRun(ctx, s.db, id); err != nil {
		return err
	}
	var res sql.Result
	var err error
	switch key {
	case tracking.TagRunName:
		res, err = s.db.ExecContext(ctx, `UPDATE runs SET display_name = '' WHERE id = ? AND display_name != ''`, id)
	case tracking.TagNote:
		res, err = s.db.ExecContext(ctx, `UPDATE runs SET description = '' WHERE id = ? AND description != ''`, id)
	default:
		res, err = s.db.ExecContext(ctx, `DELETE FROM run_tags WHERE run_id = ? AND key = ?`, id, key)
	}
	if err != nil {
		return fmt.Errorf("delete tag %s of run %s: %w", key, id, err)
	}
	return affected(res, fmt.Sprintf("No tag with name: %s in run with id %s", key, id))
}

// LogInputs records datasets a run used; the same dataset (name and digest) again replaces
// its tags.
func (s *Tracking) LogInputs(ctx context.Context, id string, inputs []tracking.DatasetInput) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("log inputs of run %s: %w", id, err)
	}
	defer tx.Rollback()
	if err := activeRun(ctx, tx, id); err != nil {
		return err
	}
	for _, in := range inputs {
		ds, err := json.Marshal(in.Dataset)
		if err != nil {
			return err
		}
		tags, err := json.Marshal(nonNilKVs(in.Tags))
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_inputs (run_id, name, digest, dataset, tags) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (run_id, name, digest) DO UPDATE SET dataset = excluded.dataset, tags = excluded.tags`,
			id, in.Dataset.Name, in.Dataset.Digest, string(ds), string(tags)); err != nil {
			return fmt.Errorf("log inputs of run %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("log inputs of run %s: %w", id, err)
	}
	return nil
}

func nonNilKVs(kvs []tracking.KV) []tracking.KV {
	if kvs == nil {
		return []tracking.KV{}
	}
	return kvs
}

// MetricHistory returns a page of one metric's history of a run (both writers), in time
// order, and whether more follow.
func (s *Tracking) MetricHistory(ctx context.Context, id, key string, offset, limit int) ([]tracking.MetricPoint, bool, error) {
	if _, err := s.runs.RunLife(ctx, id); err != nil {
		return nil, false, fmt.Errorf("Run with id=%s not found: %w", id, ErrNotFound)
	}
	out, err := queryAll(ctx, s.db, func(sc scanner) (m tracking.MetricPoint, err error) {
		m.Key = key
		err = sc.Scan(&m.Value, &m.Step, &m.Timestamp)
		m.Timestamp = ms(m.Timestamp)
		return m, err
	}, `SELECT value, step, time FROM metrics WHERE run_id = ? AND name = ?
		ORDER BY time, step, src, seq LIMIT ? OFFSET ?`, id, key, limit+1, offset)
	if err != nil {
		return nil, false, fmt.Errorf("read history of %s of run %s: %w", key, id, err)
	}
	out, more := page(out, limit)
	return out, more, nil
}

// RunParamsTags returns a run's params and its MLflow tags, for job show.
func (s *Tracking) RunParamsTags(ctx context.Context, id string) (params, tags map[string]string, err error) {
	params, tags = map[string]string{}, map[string]string{}
	for _, t := range []struct {
		table string
		into  map[string]string
	}{{"run_params", params}, {"run_tags", tags}} {
		kvs, err := queryAll(ctx, s.db, scanKV, `SELECT key, value FROM `+t.table+` WHERE run_id = ?`, id)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s of run %s: %w", t.table, id, err)
		}
		for _, kv := range kvs {
			t.into[kv.Key] = kv.Value
		}
	}
	return params, tags, nil
}
