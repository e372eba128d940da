package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Instance is a compute instance's life (design 0018): its state and why, since when, its idle
// clock (ActiveAt), how far its schedules were acted on (CheckedTo), its setup scripts' progress,
// the idle judgement last made, and its node's last activity report (Signals, JSON).
type Instance struct {
	Name       string
	State      string
	Reason     string
	Since      time.Time
	ActiveAt   time.Time
	CheckedTo  time.Time
	Created    bool
	ScriptRun  string
	ScriptKind string
	Starts     int
	Pending    string
	Idle       string
	Signals    string
	UpdatedAt  time.Time
	// DeferredStop is a scheduled stop waiting for the instance's jobs to end, as the
	// controller encodes it; "" when none.
	DeferredStop string
}

const instanceColumns = `name, state, reason, since, active_at, checked_to, created, script_run, script_kind,
	starts, pending, idle, signals, updated_at, deferred_stop`

// Instance returns an instance's row; ErrNotFound when it has none.
func (s *Instances) Get(ctx context.Context, name string) (Instance, error) {
	in, err := scanInstance(s.db.QueryRowContext(ctx, `SELECT `+instanceColumns+` FROM instances WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return in, ErrNotFound
	}
	if err != nil {
		return in, fmt.Errorf("read instance %s: %w", name, err)
	}
	return in, nil
}

// Instances returns every instance's row, by name.
func (s *Instances) List(ctx context.Context) ([]Instance, error) {
	out, err := queryAll(ctx, s.db, scanInstance, `SELECT `+instanceColumns+` FROM instances ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read instances: %w", err)
	}
	return out, nil
}

// UpdateInstance changes an instance's row in one transaction: fn sees the row (a new one,
// with only Name set, when there is none) and returns whether to write it.
func (s *Instances) Update(ctx context.Context, name string, fn func(in *Instance) (bool, error)) (Instance, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Instance{}, fmt.Errorf("update instance %s: %w", name, err)
	}
	defer tx.Rollback()
	in, err := scanInstance(tx.QueryRowContext(ctx, `SELECT `+instanceColumns+` FROM instances WHERE name = ?`, name))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		in = Instance{Name: name, Signals: "{}"}
	case err != nil:
		return in, fmt.Errorf("update instance %s: %w", name, err)
	}
	write, err := fn(&in)
	if err != nil || !write {
		return in, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO instances (`+instanceColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET state = excluded.state, reason = excluded.reason, since = excluded.since,
			active_at = excluded.active_at, checked_to = excluded.checked_to, created = excluded.created,
			script_run = excluded.script_run, script_kind = excluded.script_kind, starts = excluded.starts, pending = excluded.pending,
			idle = excluded.idle, signals = excluded.signals, updated_at = excluded.updated_at,
			deferred_stop = excluded.deferred_stop`,
		in.Name, in.State, in.Reason, nanos(in.Since), optZeroNanos(in.ActiveAt), optZeroNanos(in.CheckedTo),
		in.Created, in.ScriptRun, in.ScriptKind, in.Starts, in.Pending, in.Idle, in.Signals, nanos(in.UpdatedAt), in.DeferredStop)
	if err != nil {
		return in, fmt.Errorf("update instance %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return in, fmt.Errorf("update instance %s: %w", name, err)
	}
	return in, nil
}

// DeleteInstance removes an instance's row (its target was deleted).
func (s *Instances) Delete(ctx context.Context, name string) error {
	return execStmt(ctx, s.db, "delete instance "+name, `DELETE FROM instances WHERE name = ?`, name)
}

func scanInstance(row scanner) (Instance, error) {
	var in Instance
	var since, updated int64
	var active, checked sql.NullInt64
	err := row.Scan(&in.Name, &in.State, &in.Reason, &since, &active, &checked, &in.Created, &in.ScriptRun,
		&in.ScriptKind, &in.Starts, &in.Pending, &in.Idle, &in.Signals, &updated, &in.DeferredStop)
	if err != nil {
		return in, err
	}
	in.Since, in.UpdatedAt = fromNanos(since), fromNanos(updated)
	if active.Valid {
		in.ActiveAt = fromNanos(active.Int64)
	}
	if checked.Valid {
		in.CheckedTo = fromNanos(checked.Int64)
	}
	return in, nil
}
