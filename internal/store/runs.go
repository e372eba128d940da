package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// CreateRun inserts a new run with its first events. It is durable when it returns: the run was
// accepted.
func (s *RunWrites) CreateRun(ctx context.Context, r *job.Run, events ...job.Event) error {
	doing := "create run " + r.ID
	err := s.withTx(ctx, doing, func(tx *sql.Tx) error {
		if err := insertRun(ctx, tx, r, ""); err != nil {
			return err
		}
		if err := attachTracking(ctx, tx, r); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		if err := appendEvents(ctx, tx, r.ID, events); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.wal.sync()
}

// insertRun inserts r's row; extraCols names more columns (", a, b") whose values are extra.
// A run of that id already there is ErrExists.
func insertRun(ctx context.Context, tx *sql.Tx, r *job.Run, extraCols string, extra ...any) error {
	args, err := runValues(r)
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	q := `INSERT INTO runs (` + runColumns + extraCols + `) VALUES (?` +
		strings.Repeat(", ?", len(runTable)-1+len(extra)) + `)`
	if _, err := tx.ExecContext(ctx, q, append(args, extra...)...); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("run %s: %w", r.ID, ErrExists)
		}
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	return nil
}

// Run returns one run.
func (s *Runs) Run(ctx context.Context, id string) (*job.Run, error) {
	return getRun(ctx, s.db, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func getRun(ctx context.Context, q querier, id string) (*job.Run, error) {
	return getOne(q.QueryRowContext(ctx, selectRuns+` WHERE runs.id = ?`, id), scanRun, "run", id)
}

// RunFilter selects runs for Runs. Every field is bound as a parameter (runlist.go).
type RunFilter struct {
	// Active selects only runs that are not terminal.
	Active bool
	// Compute selects runs on one target ("" = all).
	Compute string
	// Limit caps the number of runs (0 = no cap); newest first.
	Limit int

	// Statuses selects runs in any of these states (none = all).
	Statuses []job.State
	// Experiment selects one experiment's runs ("" = all).
	Experiment string
	// Tags selects runs having every tag (by key alone where a TagFilter has no value).
	Tags []TagFilter
	// Since selects runs created at or after it (zero = all).
	Since time.Time
	// Query selects runs whose name or display name contains it, ignoring case.
	Query string
	// User selects runs submitted by this user (their spec's created_by property, which the
	// server stamps on every job it accepts) ("" = all).
	User string
	// Archived says what to do with archived runs (zero: list them like any other).
	Archived ArchivedFilter
	// Order is one of RunOrders ("" = "-created", newest first).
	Order string
	// After continues a list after this run (a page's cursor); nil starts at the top.
	After *RunCursor
}

// activeStates is the list of terminal states written out, as the partial index runs_active
// (migration 0007) has it: SQLite uses a partial index only for a query whose condition is the
// index's own, which a bound parameter is not.
var activeStates = fmt.Sprintf("'%s', '%s', '%s'", job.Completed, job.Failed, job.Canceled)

// Runs lists runs, newest first.
func (s *Runs) List(ctx context.Context, f RunFilter) ([]*job.Run, error) {
	q, args := runsQuery(s.dialect, f)
	out, err := queryAll(ctx, s.db, scanRun, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// CancelsOwed lists the job runs that ended Canceled, at or after endedAfter, while their
// backend never took the cancel (cancel_sent still 0): the controller sends it again, so that
// what the backend holds for them is released. Read on the controller's full passes (every few
// minutes), so it reads the runs table without an index of its own.
func (s *Runs) CancelsOwed(ctx context.Context, endedAfter time.Time) ([]*job.Run, error) {
	q := selectRuns + ` WHERE runs.status = ? AND runs.is_job = 1 AND runs.cancel_sent = 0
		AND runs.handle IS NOT NULL AND runs.ended_at >= ? ORDER BY runs.ended_at, runs.id`
	out, err := queryAll(ctx, s.db, scanRun, q, string(job.Canceled), endedAfter.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("list runs owed a cancel: %w", err)
	}
	return out, nil
}

// runsQuery is the statement of Runs: each shape reads an index in the order of the list
// (TestRunListsReadAnIndex), so that the newest 50 of any number of runs cost 50 rows.
func runsQuery(d dialect, f RunFilter) (string, []any) {
	q := selectRuns + ` WHERE 1 = 1`
	var args []any
	if f.Active {
		// Runs created through the MLflow API are not jobs: no backend runs them (migration 0008).
		q += ` AND runs.status NOT IN (` + activeStates + `) AND runs.is_job = 1`
	}
	switch {
	case f.Compute != "" && f.Active:
		// runs_active, not runs_compute_created: a target's active runs are few, its history is not.
		q += ` AND ` + d.unindexed("runs.compute") + ` = ?`
		args = append(args, f.Compute)
	case f.Compute != "":
		q += ` AND runs.compute = ?`
		args = append(args, f.Compute)
	}
	where, wargs := listConditions(d, f)
	q += where
	args = append(args, wargs...)
	q += ` ORDER BY ` + orderBy(f.Order)
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	return q, args
}

// UpdateRun reads a run, lets fn change it and returns the events to record, and writes both in
// one transaction: only the columns fn changed are written (runcolumns.go), and a change that
// must survive a power loss (the run's end, its artifacts) is on the disk when UpdateRun returns.
// When fn returns an error nothing is written and the error is returned as is.
func (s *RunWrites) UpdateRun(ctx context.Context, id string, fn func(r *job.Run) ([]job.Event, error)) (*job.Run, error) {
	return s.updateRun(ctx, id, func(_ querier, r *job.Run) ([]job.Event, error) { return fn(r) })
}

// updateRun is UpdateRun whose fn may also read other tables in the same transaction.
func (s *RunWrites) updateRun(ctx context.Context, id string, fn func(q querier, r *job.Run) ([]job.Event, error)) (*job.Run, error) {
	doing := "update run " + id
	var r *job.Run
	var durable bool
	err := s.withTx(ctx, doing, func(tx *sql.Tx) (err error) {
		if r, err = getRun(ctx, tx, id); err != nil {
			return err
		}
		before, err := runValues(r)
		if err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		events, err := fn(tx, r)
		if err != nil {
			return err
		}
		if durable, err = writeRunUpdate(ctx, tx, id, before, r, events); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if durable {
		if err := s.wal.sync(); err != nil {
			return nil, fmt.Errorf("%s: %w", doing, err)
		}
	}
	return r, nil
}

// writeRunUpdate writes what changed of run id's row since before (its runValues then) and its
// events; durable says whether the change must reach the disk.
func writeRunUpdate(ctx context.Context, tx *sql.Tx, id string, before []any, r *job.Run, events []job.Event) (durable bool, err error) {
	after, err := runValues(r)
	if err != nil {
		return false, err
	}
	change, err := changeOf(before, after)
	if err != nil {
		return false, err
	}
	if err := writeRunChange(ctx, tx, id, change); err != nil {
		return false, err
	}
	return change.durable, appendEvents(ctx, tx, id, events)
}

// Events returns a run's status transitions in order.
func (s *Runs) Events(ctx context.Context, id string) ([]job.Event, error) {
	out, err := queryAll(ctx, s.db, scanEvent,
		`SELECT time, from_status, to_status, reason FROM run_events WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", id, err)
	}
	return out, nil
}

func scanEvent(sc scanner) (e job.Event, err error) {
	var t int64
	var from, to string
	err = sc.Scan(&t, &from, &to, &e.Reason)
	e.Time, e.From, e.To = fromNanos(t), job.State(from), job.State(to)
	return e, err
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

// scanRun reads a row of selectRuns.
func scanRun(sc scanner) (*job.Run, error) {
	var r job.Run
	var tags, status, warnings, spec, named, timings string
	var created int64
	var started, ended, hb, exit, placedAttempt sql.NullInt64
	var handle, placedNodes, placedGPUs sql.NullString
	err := sc.Scan(&r.ID, &r.DisplayName, &r.ExperimentName, &r.Description, &tags, &r.Compute, &status,
		&r.StatusReason, &created, &started, &ended, &exit, &warnings, &spec, &handle, &r.TokenHash, &hb,
		&r.CancelSent, &r.ArtifactsHash, &named, &timings, &r.Attempt, &placedAttempt, &placedNodes, &placedGPUs)
	if err != nil {
		return nil, err
	}
	if placedAttempt.Valid && int(placedAttempt.Int64) == max(r.Attempt, 1) { // not an earlier attempt's
		if r.Placement, err = decodePlacement(placedNodes.String, placedGPUs.String); err != nil {
			return nil, fmt.Errorf("decode placement of %s: %w", r.ID, err)
		}
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

// RunLife returns what decides whether a run's token may act for it (see controller.Admit): the
// run's id, status, attempt and end, without decoding its spec or record. Every supervisor
// request is authenticated, so this read is the server's most frequent one.
func (s *Runs) RunLife(ctx context.Context, id string) (*job.Run, error) {
	r := job.Run{ID: id}
	var status string
	var ended sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT status, attempt, ended_at FROM runs WHERE id = ?`, id).Scan(&status, &r.Attempt, &ended)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", id, err)
	}
	r.Status, r.EndedAt = job.State(status), optTime(ended)
	return &r, nil
}
