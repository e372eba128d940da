package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// What job list, job archive and job delete read and write. User text reaches SQL only as bound
// parameters: an order is one of a fixed set of column lists, and a page's cursor carries values.

// TagFilter selects runs having tag Key (with value Value when HasValue).
type TagFilter struct {
	Key, Value string
	HasValue   bool
}

// ArchivedFilter says which runs a list shows by their archived mark.
type ArchivedFilter int

const (
	// ArchivedAny lists archived and other runs alike (the controller's lists).
	ArchivedAny ArchivedFilter = iota
	// ArchivedHide leaves archived runs out (job list's default).
	ArchivedHide
	// ArchivedOnly lists archived runs alone (job list --archived).
	ArchivedOnly
)

// sortKey is one column of a list's order.
type sortKey struct {
	col  string
	desc bool
}

// runOrders are the orders a list may ask for; each ends with the run's id so that it is total,
// which is what lets a cursor say where a page ended.
var runOrders = map[string][]sortKey{
	"-created": {{"runs.created_at", true}, {"runs.id", true}},
	"created":  {{"runs.created_at", false}, {"runs.id", false}},
	"name":     {{"runs.id", false}},
	"-name":    {{"runs.id", true}},
	"status":   {{"runs.status", false}, {"runs.created_at", true}, {"runs.id", true}},
	"-status":  {{"runs.status", true}, {"runs.created_at", true}, {"runs.id", true}},
}

// RunOrders lists the orders a RunFilter may name, for help and error messages.
func RunOrders() []string {
	out := make([]string, 0, len(runOrders))
	for k := range runOrders {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ValidRunOrder reports whether order is one of RunOrders ("" is the default order).
func ValidRunOrder(order string) bool {
	_, ok := runOrders[order]
	return ok || order == ""
}

func sortKeys(order string) []sortKey {
	if keys, ok := runOrders[order]; ok {
		return keys
	}
	return runOrders["-created"]
}

func orderBy(order string) string {
	var parts []string
	for _, k := range sortKeys(order) {
		dir := " ASC"
		if k.desc {
			dir = " DESC"
		}
		parts = append(parts, k.col+dir)
	}
	return strings.Join(parts, ", ")
}

// RunCursor is where a page of a list ended: the sort key of its last run.
type RunCursor struct {
	Order   string `json:"o"`
	Created int64  `json:"c"`
	ID      string `json:"i"`
	Status  string `json:"s"`
}

// CursorOf is the cursor after run r in a list in order.
func CursorOf(order string, r *job.Run) *RunCursor {
	return &RunCursor{Order: order, Created: nanos(r.CreatedAt), ID: r.ID, Status: string(r.Status)}
}

func (c *RunCursor) value(col string) any {
	switch col {
	case "runs.created_at":
		return c.Created
	case "runs.status":
		return c.Status
	default:
		return c.ID
	}
}

// after is the condition "comes after the cursor in this order", written out column by column
// as (a > x) OR (a = x AND b > y) ... so that it holds for orders with mixed directions.
func (c *RunCursor) after(order string) (string, []any) {
	keys := sortKeys(order)
	var ors []string
	var args []any
	for i, k := range keys {
		var ands []string
		for _, eq := range keys[:i] {
			ands = append(ands, eq.col+" = ?")
			args = append(args, c.value(eq.col))
		}
		op := " > ?"
		if k.desc {
			op = " < ?"
		}
		ands = append(ands, k.col+op)
		args = append(args, c.value(k.col))
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")", args
}

// listConditions are the conditions of job list's filters, each with bound parameters.
func listConditions(d dialect, f RunFilter) (string, []any) {
	var q strings.Builder
	var args []any
	if len(f.Statuses) > 0 {
		q.WriteString(` AND runs.status IN (?` + strings.Repeat(", ?", len(f.Statuses)-1) + `)`)
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
	}
	if f.Experiment != "" {
		q.WriteString(` AND runs.experiment_name = ?`)
		args = append(args, f.Experiment)
	}
	for _, t := range f.Tags {
		if t.HasValue {
			q.WriteString(` AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.id AND t.key = ? AND t.value = ?)`)
			args = append(args, t.Key, t.Value)
		} else {
			q.WriteString(` AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.id AND t.key = ?)`)
			args = append(args, t.Key)
		}
	}
	if !f.Since.IsZero() {
		q.WriteString(` AND runs.created_at >= ?`)
		args = append(args, nanos(f.Since))
	}
	if f.Query != "" {
		q.WriteString(` AND (` + d.containsFold("runs.id") + ` OR ` + d.containsFold("runs.display_name") + `)`)
		args = append(args, f.Query, f.Query)
	}
	if f.User != "" {
		q.WriteString(` AND ` + d.jsonText("runs.spec", "properties", "created_by") + ` = ?`)
		args = append(args, f.User)
	}
	switch f.Archived {
	case ArchivedHide:
		q.WriteString(` AND runs.archived = 0`)
	case ArchivedOnly:
		q.WriteString(` AND runs.archived = 1`)
	}
	if f.After != nil {
		cond, cargs := f.After.after(f.Order)
		q.WriteString(" AND " + cond)
		args = append(args, cargs...)
	}
	return q.String(), args
}

// RunsPage lists up to f.Limit runs and, when more follow, the cursor to pass as After for the
// next page.
func (s *Runs) RunsPage(ctx context.Context, f RunFilter) ([]*job.Run, *RunCursor, error) {
	if f.Limit <= 0 {
		return nil, nil, fmt.Errorf("list runs: a page needs a limit")
	}
	limit := f.Limit
	f.Limit++
	runs, err := s.List(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	if len(runs) <= limit {
		return runs, nil, nil
	}
	runs = runs[:limit]
	return runs, CursorOf(f.Order, runs[limit-1]), nil
}

// SetArchived marks a run archived (hidden from job list) or not.
func (s *RunWrites) SetArchived(ctx context.Context, id string, archived bool) error {
	return execOne(ctx, s.db, "archive run "+id, "run "+id, `UPDATE runs SET archived = ? WHERE id = ?`, archived, id)
}

// RunListing is what job list and job show add to a run: its archived mark and the command
// its supervisor reported it ran ("" until it runs).
type RunListing struct {
	Archived     bool
	BoundCommand string
}

// Listing reads a run's RunListing.
func (s *Runs) Listing(ctx context.Context, id string) (RunListing, error) {
	var l RunListing
	err := s.db.QueryRowContext(ctx, `SELECT archived, bound_command FROM runs WHERE id = ?`, id).Scan(&l.Archived, &l.BoundCommand)
	if err != nil {
		return l, fmt.Errorf("run %s: %w", id, notFound(err))
	}
	return l, nil
}

// ErrNotEnded is returned when deleting a run that has not ended.
var ErrNotEnded = errors.New("has not ended")

// DeleteRun removes an ended run with its events, log lines and metrics (its other rows go with
// it by their foreign keys). Its blobs stay: they are shared by content, and no collector of
// unreferenced blobs exists yet.
func (s *RunWrites) DeleteRun(ctx context.Context, id string) error {
	doing := "delete run " + id
	err := s.withTx(ctx, doing, func(tx *sql.Tx) error {
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status); err != nil {
			return fmt.Errorf("run %s: %w", id, notFound(err))
		}
		if !job.State(status).Terminal() {
			return fmt.Errorf("run %s is %s: %w", id, status, ErrNotEnded)
		}
		for _, q := range []string{
			`DELETE FROM log_lines WHERE run_id = ?`,
			`DELETE FROM metrics WHERE run_id = ?`,
			`DELETE FROM latest_metrics WHERE run_id = ?`,
			`DELETE FROM run_events WHERE run_id = ?`,
			`DELETE FROM runs WHERE id = ?`,
		} {
			if err := execStmt(ctx, tx, doing, q, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.wal.sync()
}

// SetBoundCommand records the command a run's supervisor ran, bound to its inputs and outputs.
func (s *RunWrites) SetBoundCommand(ctx context.Context, id, command string) error {
	return execStmt(ctx, s.db, "record command of "+id, `UPDATE runs SET bound_command = ? WHERE id = ?`, command, id)
}

// ArchivedOf returns which of the runs ids are archived.
func (s *Runs) ArchivedOf(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := inIDs(ids)
	archived, err := queryAll(ctx, s.db, scanValue[string], `SELECT id FROM runs WHERE archived = 1 AND id `+in, args...)
	if err != nil {
		return nil, fmt.Errorf("read archived marks: %w", err)
	}
	for _, id := range archived {
		out[id] = true
	}
	return out, nil
}

// LastMetricsOf returns each run's last value of each metric, for a page of runs in one query.
func (s *Runs) LastMetricsOf(ctx context.Context, ids []string) (map[string]map[string]float64, error) {
	out, err := valuesOfRuns[float64](ctx, s.db, `SELECT run_id, name, value FROM latest_metrics WHERE run_id `, ids)
	if err != nil {
		return nil, fmt.Errorf("read metrics of %d runs: %w", len(ids), err)
	}
	return out, nil
}

// valuesOfRuns reads the rows (run id, key, value) that query, ending where the IN list of the
// runs ids goes, selects: each run's values by key.
func valuesOfRuns[V any](ctx context.Context, q querier, query string, ids []string) (map[string]map[string]V, error) {
	out := map[string]map[string]V{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := inIDs(ids)
	err := eachRow(ctx, q, query+in, args, func(sc scanner) error {
		var id, key string
		var v V
		if err := sc.Scan(&id, &key, &v); err != nil {
			return err
		}
		if out[id] == nil {
			out[id] = map[string]V{}
		}
		out[id][key] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// notFound is ErrNotFound for a row that is not there, else err.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// TagsOf returns each run's tags (the job's spec tags and those set since, through MLflow), for
// a page of runs in one query.
func (s *Runs) TagsOf(ctx context.Context, ids []string) (map[string]map[string]string, error) {
	out, err := valuesOfRuns[string](ctx, s.db, `SELECT run_id, key, value FROM run_tags WHERE run_id `, ids)
	if err != nil {
		return nil, fmt.Errorf("read tags of %d runs: %w", len(ids), err)
	}
	return out, nil
}
