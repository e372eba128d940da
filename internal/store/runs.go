package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

const runColumns = `id, display_name, experiment_name, description, tags, compute, status, status_reason,
	created_at, started_at, ended_at, exit_code, warnings, spec, handle, token_hash, last_heartbeat,
	cancel_sent, artifacts, named_outputs, timings, attempt`

// CreateRun inserts a new run with its first events.
func (s *Store) CreateRun(ctx context.Context, r *job.Run, events ...job.Event) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	defer tx.Rollback()
	args, err := runArgs(r)
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	q := `INSERT INTO runs (` + runColumns + `) VALUES (?` + strings.Repeat(", ?", 21) + `)`
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed") {
			return fmt.Errorf("run %s: %w", r.ID, ErrExists)
		}
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	if err := appendEvents(ctx, tx, r.ID, events); err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	return nil
}

// Run returns one run.
func (s *Store) Run(ctx context.Context, id string) (*job.Run, error) {
	return getRun(ctx, s.db, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func getRun(ctx context.Context, q querier, id string) (*job.Run, error) {
	row := q.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id)
	r, err := scanRun(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", id, err)
	}
	return r, nil
}

// RunFilter selects runs for Runs.
type RunFilter struct {
	// Active selects only runs that are not terminal.
	Active bool
	// Compute selects runs on one target ("" = all).
	Compute string
	// Limit caps the number of runs (0 = no cap); newest first.
	Limit int
}

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]*job.Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs WHERE 1 = 1`
	var args []any
	if f.Active {
		q += ` AND status NOT IN (?, ?, ?)`
		args = append(args, job.Completed, job.Failed, job.Canceled)
	}
	if f.Compute != "" {
		q += ` AND compute = ?`
		args = append(args, f.Compute)
	}
	q += ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []*job.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// UpdateRun reads a run, lets fn change it and returns the events to record, and writes both in one transaction.
// When fn returns an error nothing is written and the error is returned as is.
func (s *Store) UpdateRun(ctx context.Context, id string, fn func(r *job.Run) ([]job.Event, error)) (*job.Run, error) {
	return s.updateRun(ctx, id, func(_ querier, r *job.Run) ([]job.Event, error) { return fn(r) })
}

// updateRun is UpdateRun whose fn may also read other tables in the same transaction.
func (s *Store) updateRun(ctx context.Context, id string, fn func(q querier, r *job.Run) ([]job.Event, error)) (*job.Run, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("update run %s: %w", id, err)
	}
	defer tx.Rollback()
	r, err := getRun(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	events, err := fn(tx, r)
	if err != nil {
		return nil, err
	}
	args, err := runArgs(r)
	if err != nil {
		return nil, fmt.Errorf("update run %s: %w", id, err)
	}
	sets := strings.Split(strings.ReplaceAll(runColumns, "\n", ""), ",")
	for i := range sets {
		sets[i] = strings.TrimSpace(sets[i]) + " = ?"
	}
	q := `UPDATE runs SET ` + strings.Join(sets[1:], ", ") + ` WHERE id = ?`
	if _, err := tx.ExecContext(ctx, q, append(args[1:], id)...); err != nil {
		return nil, fmt.Errorf("update run %s: %w", id, err)
	}
	if err := appendEvents(ctx, tx, id, events); err != nil {
		return nil, fmt.Errorf("update run %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("update run %s: %w", id, err)
	}
	return r, nil
}

// Events returns a run's status transitions in order.
func (s *Store) Events(ctx context.Context, id string) ([]job.Event, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT time, from_status, to_status, reason FROM run_events WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", id, err)
	}
	defer rows.Close()
	var out []job.Event
	for rows.Next() {
		var e job.Event
		var t int64
		var from, to string
		if err := rows.Scan(&t, &from, &to, &e.Reason); err != nil {
			return nil, fmt.Errorf("read events of %s: %w", id, err)
		}
		e.Time, e.From, e.To = fromNanos(t), job.State(from), job.State(to)
		out = append(out, e)
	}
	return out, rows.Err()
}

func appendEvents(ctx context.Context, tx *sql.Tx, id string, events []job.Event) error {
	if len(events) == 0 {
		return nil
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM run_events WHERE run_id = ?`, id).Scan(&seq); err != nil {
		return err
	}
	for _, e := range events {
		seq++
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO run_events (run_id, seq, time, from_status, to_status, reason) VALUES (?, ?, ?, ?, ?, ?)`,
			id, seq, nanos(e.Time), string(e.From), string(e.To), e.Reason); err != nil {
			return err
		}
	}
	return nil
}

func runArgs(r *job.Run) ([]any, error) {
	tags, err := json.Marshal(nonNilMap(r.Tags))
	if err != nil {
		return nil, err
	}
	warnings, err := json.Marshal(nonNilSlice(r.Warnings))
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(r.Spec)
	if err != nil {
		return nil, err
	}
	named, err := json.Marshal(nonNilMap(r.NamedOutputs))
	if err != nil {
		return nil, err
	}
	timings := []byte("{}")
	if len(r.Timings) > 0 {
		if timings, err = json.Marshal(r.Timings); err != nil {
			return nil, err
		}
	}
	var handle any
	if len(r.Handle) > 0 {
		handle = string(r.Handle)
	}
	var hb any
	if !r.LastHeartbeat.IsZero() {
		hb = nanos(r.LastHeartbeat)
	}
	var exit any
	if r.ExitCode != nil {
		exit = *r.ExitCode
	}
	return []any{r.ID, r.DisplayName, r.ExperimentName, r.Description, string(tags), r.Compute,
		string(r.Status), r.StatusReason, nanos(r.CreatedAt), optNanos(r.StartedAt), optNanos(r.EndedAt),
		exit, string(warnings), string(spec), handle, r.TokenHash, hb, r.CancelSent,
		r.ArtifactsHash, string(named), string(timings), max(r.Attempt, 1)}, nil
}

func scanRun(sc scanner) (*job.Run, error) {
	var r job.Run
	var tags, status, warnings, spec, named, timings string
	var created int64
	var started, ended, hb, exit sql.NullInt64
	var handle sql.NullString
	err := sc.Scan(&r.ID, &r.DisplayName, &r.ExperimentName, &r.Description, &tags, &r.Compute, &status,
		&r.StatusReason, &created, &started, &ended, &exit, &warnings, &spec, &handle, &r.TokenHash, &hb,
		&r.CancelSent, &r.ArtifactsHash, &named, &timings, &r.Attempt)
	if err != nil {
		return nil, err
	}
	r.Status = job.State(status)
	r.CreatedAt = fromNanos(created)
	r.StartedAt, r.EndedAt = optTime(started), optTime(ended)
	if exit.Valid {
		c := int(exit.Int64)
		r.ExitCode = &c
	}
	if hb.Valid {
		r.LastHeartbeat = fromNanos(hb.Int64)
	}
	if handle.Valid {
		r.Handle = json.RawMessage(handle.String)
	}
	for _, f := range []struct {
		src string
		dst any
	}{{tags, &r.Tags}, {warnings, &r.Warnings}, {spec, &r.Spec}, {named, &r.NamedOutputs}, {timings, &r.Timings}} {
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return nil, fmt.Errorf("decode run %s: %w", r.ID, err)
		}
	}
	return &r, nil
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
