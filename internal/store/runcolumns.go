package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// How a run is stored, column by column, and what an update of a run writes. Every write of a
// run row goes through here: an update writes only the columns whose stored value changed (a
// status report used to rewrite all 22, the spec's JSON included, and both indexes), and the
// column table says which changes must reach the disk before they are acknowledged.

// runColumn is one column of the runs table.
type runColumn struct {
	name string
	// value is the column's stored value for a run.
	value func(r *job.Run) (any, error)
	// durable reports whether a change to stored value v must survive a power loss once the
	// store returns (nil: never); see Store.Sync.
	durable func(v any) bool
}

// runTable lists the columns in the order scanRun reads them; id comes first.
var runTable = []runColumn{
	{name: "id", value: func(r *job.Run) (any, error) { return r.ID, nil }},
	{name: "display_name", value: func(r *job.Run) (any, error) { return r.DisplayName, nil }},
	{name: "experiment_name", value: func(r *job.Run) (any, error) { return r.ExperimentName, nil }},
	{name: "description", value: func(r *job.Run) (any, error) { return r.Description, nil }},
	{name: "tags", value: func(r *job.Run) (any, error) { return jsonText(nonNilMap(r.Tags)) }},
	{name: "compute", value: func(r *job.Run) (any, error) { return r.Compute, nil }},
	// A run's end is what its user and its supervisor are told last: it must not be undone.
	{name: "status", value: func(r *job.Run) (any, error) { return string(r.Status), nil },
		durable: func(v any) bool { return job.State(v.(string)).Terminal() }},
	{name: "status_reason", value: func(r *job.Run) (any, error) { return r.StatusReason, nil }},
	{name: "created_at", value: func(r *job.Run) (any, error) { return nanos(r.CreatedAt), nil }},
	{name: "started_at", value: func(r *job.Run) (any, error) { return optNanos(r.StartedAt), nil }},
	{name: "ended_at", value: func(r *job.Run) (any, error) { return optNanos(r.EndedAt), nil }},
	{name: "exit_code", value: func(r *job.Run) (any, error) { return optInt(r.ExitCode), nil }},
	{name: "warnings", value: func(r *job.Run) (any, error) { return jsonText(nonNilSlice(r.Warnings)) }},
	{name: "spec", value: func(r *job.Run) (any, error) { return jsonText(r.Spec) }},
	{name: "handle", value: func(r *job.Run) (any, error) { return optText(string(r.Handle)), nil }},
	{name: "token_hash", value: func(r *job.Run) (any, error) { return r.TokenHash, nil }},
	{name: "last_heartbeat", value: func(r *job.Run) (any, error) { return optZeroNanos(r.LastHeartbeat), nil }},
	{name: "cancel_sent", value: func(r *job.Run) (any, error) { return r.CancelSent, nil }},
	// Registered artifacts: the supervisor may drop what it collected once it is told.
	{name: "artifacts", value: func(r *job.Run) (any, error) { return r.ArtifactsHash, nil }, durable: always},
	{name: "named_outputs", value: func(r *job.Run) (any, error) { return jsonText(nonNilMap(r.NamedOutputs)) }, durable: always},
	{name: "timings", value: func(r *job.Run) (any, error) { return timingsText(r.Timings) }},
	{name: "attempt", value: func(r *job.Run) (any, error) { return max(r.Attempt, 1), nil }},
}

// runColumns is the column list of SELECT and INSERT statements, in runTable's order.
var runColumns = func() string {
	names := make([]string, len(runTable))
	for i, c := range runTable {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}()

// selectRuns reads runs with their current placement in one statement (scanRun's columns): a
// run's placement is its own row of run_placements, found by the run's key, and a second query
// per read of a run cost as much as the read itself (server profile, BENCHMARKS.md).
var selectRuns = func() string {
	names := make([]string, len(runTable))
	for i, c := range runTable {
		names[i] = "runs." + c.name
	}
	return `SELECT ` + strings.Join(names, ", ") + `, p.attempt, p.nodes, p.gpus
		FROM runs LEFT JOIN run_placements p ON p.run_id = runs.id`
}()

func always(any) bool { return true }

// runValues is a run as stored, in runTable's order.
func runValues(r *job.Run) ([]any, error) {
	out := make([]any, len(runTable))
	for i, c := range runTable {
		v, err := c.value(r)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", c.name, err)
		}
		out[i] = v
	}
	return out, nil
}

// runChange is what an update of a run writes: the columns whose stored value changed, and
// whether the change must be durable before the update returns.
type runChange struct {
	columns []string
	values  []any
	durable bool
}

// changeOf compares a run's stored values before and after an update (both from runValues).
func changeOf(before, after []any) (runChange, error) {
	if before[0] != after[0] {
		return runChange{}, fmt.Errorf("a run's id cannot change (%v to %v)", before[0], after[0])
	}
	var c runChange
	for i := 1; i < len(runTable); i++ {
		if before[i] == after[i] {
			continue
		}
		c.columns = append(c.columns, runTable[i].name)
		c.values = append(c.values, after[i])
		if d := runTable[i].durable; d != nil && d(after[i]) {
			c.durable = true
		}
	}
	return c, nil
}

// writeRunChange writes a change of run id's row; a run that does not exist is ErrNotFound
// (unwrapped: callers say which run).
func writeRunChange(ctx context.Context, q querier, id string, c runChange) error {
	if len(c.columns) == 0 {
		return nil
	}
	sets := make([]string, len(c.columns))
	for i, name := range c.columns {
		sets[i] = name + " = ?"
	}
	res, err := q.ExecContext(ctx, `UPDATE runs SET `+strings.Join(sets, ", ")+` WHERE id = ?`, append(c.values, id)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return ErrNotFound
	}
	return nil
}

// TouchRun records that a run's supervisor was heard from at t. It writes that column alone,
// without reading the run, and does not wait for the disk: a heartbeat lost to a power loss is
// one more silent interval.
func (s *RunWrites) TouchRun(ctx context.Context, id string, t time.Time) error {
	c := runChange{columns: []string{"last_heartbeat"}, values: []any{nanos(t)}}
	err := writeRunChange(ctx, s.db, id, c)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("run %s: %w", id, err)
	}
	if err != nil {
		return fmt.Errorf("touch run %s: %w", id, err)
	}
	return nil
}

func jsonText(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func timingsText(t map[string]float64) (any, error) {
	if len(t) == 0 {
		return "{}", nil
	}
	return jsonText(t)
}

func optInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

func optText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func optZeroNanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return nanos(t)
}
