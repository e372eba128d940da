package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// A parent run (a sweep, a pipeline) is a run no backend sees, with a row in its kind's table
// (parentTable) whose run_id is the parent's. Its children are ordinary runs, each created with
// its row in the kind's children table in the same transaction, so that a child is created once
// however often (and by however many passes) the parent's loop asks for it.

// parentTable names a kind of parent's table; only these constants reach a query.
type parentTable string

const (
	sweepsTable    parentTable = "sweeps"
	pipelinesTable parentTable = "pipelines"
)

// createParent creates a parent's run and its row in table, in one transaction.
func (s *RunWrites) createParent(ctx context.Context, what string, table parentTable, r *job.Run, events []job.Event) error {
	return s.inTx(ctx, what, func(tx *sql.Tx) error {
		if err := insertRun(ctx, tx, r, ""); err != nil {
			return err
		}
		if err := attachTracking(ctx, tx, r); err != nil {
			return err
		}
		if err := insertParentRow(ctx, tx, table, r.ID); err != nil {
			return err
		}
		return appendEvents(ctx, tx, r.ID, events)
	})
}

func insertParentRow(ctx context.Context, tx *sql.Tx, table parentTable, id string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO `+string(table)+` (run_id) VALUES (?)`, id)
	return err
}

// childRow is how a kind of parent records one child in its transaction: absent answers the
// kind's "exists" error when the parent has the child already (so that nothing is written), and
// insert writes the row (and answers that error too when a concurrent writer won).
type childRow struct {
	absent func(*sql.Tx) error
	insert func(*sql.Tx) error
}

// createChild creates a child's run and its row in one transaction; a run of that name is ErrExists.
func (s *RunWrites) createChild(ctx context.Context, what string, row childRow, r *job.Run, events []job.Event) error {
	return s.inTx(ctx, what, func(tx *sql.Tx) error {
		if err := row.absent(tx); err != nil {
			return err
		}
		if err := insertRun(ctx, tx, r, ""); err != nil {
			return err
		}
		if err := row.insert(tx); err != nil {
			return err
		}
		if err := attachTracking(ctx, tx, r); err != nil {
			return err
		}
		return appendEvents(ctx, tx, r.ID, events)
	})
}

// activeParents lists the parents in table that have not ended, oldest first.
func (s *Parents) activeParents(ctx context.Context, table parentTable) ([]*job.Run, error) {
	t := string(table)
	ids, err := queryAll(ctx, s.db, scanValue[string], `SELECT `+t+`.run_id FROM `+t+` JOIN runs ON runs.id = `+t+`.run_id
		WHERE runs.status NOT IN ('Completed', 'Failed', 'Canceled') ORDER BY runs.created_at, runs.id`)
	if err != nil {
		return nil, fmt.Errorf("read active %s: %w", t, err)
	}
	var out []*job.Run
	for _, id := range ids {
		r, err := s.runs.Run(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// attachRuns reads the run of each of a parent's children (left nil for a child without one, or
// whose run was deleted since); run gives a child's run id and where its run goes.
func attachRuns[T any](ctx context.Context, runs *Runs, children []T, run func(*T) (string, **job.Run)) error {
	for i := range children {
		id, dst := run(&children[i])
		if id == "" {
			continue
		}
		r, err := runs.Run(ctx, id)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		*dst = r
	}
	return nil
}

// inIDs is the "IN (?, ...)" of a query over ids (not empty) and its arguments.
func inIDs(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return `IN (?` + strings.Repeat(", ?", len(ids)-1) + `)`, args
}
