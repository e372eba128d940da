package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// recordColumnWrites makes the database note every column an UPDATE of a run sets (SQLite fires
// `UPDATE OF column` triggers for the columns in the SET list, changed or not) and returns a
// function that takes the notes.
func recordColumnWrites(t *testing.T, s *Store) func() []string {
	t.Helper()
	ctx := t.Context()
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE column_writes (name TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	trigger := func(col string) string {
		return `CREATE TRIGGER write_` + col + ` AFTER UPDATE OF ` + col + ` ON runs
			BEGIN INSERT INTO column_writes VALUES ('` + col + `'); END`
	}
	if s.dialect.postgres() { // the same triggers in PL/pgSQL, which fires them alike
		if _, err := s.db.ExecContext(ctx, `CREATE FUNCTION note_write() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN INSERT INTO column_writes VALUES (TG_ARGV[0]); RETURN NULL; END $$`); err != nil {
			t.Fatal(err)
		}
		trigger = func(col string) string {
			return `CREATE TRIGGER write_` + col + ` AFTER UPDATE OF ` + col + ` ON runs
				FOR EACH ROW EXECUTE FUNCTION note_write('` + col + `')`
		}
	}
	for _, c := range runTable {
		if _, err := s.db.ExecContext(ctx, trigger(c.name)); err != nil {
			t.Fatal(err)
		}
	}
	return func() []string {
		t.Helper()
		rows, err := s.db.QueryContext(ctx, `SELECT name FROM column_writes`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		if _, err := s.db.ExecContext(ctx, `DELETE FROM column_writes`); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
}

func createTestRun(t *testing.T, s *Store, id string) {
	t.Helper()
	r := &job.Run{ID: id, Compute: "local", Status: job.Queued, CreatedAt: time.Unix(1700000000, 0).UTC(),
		Spec: job.Spec{Type: "command", Command: "echo hi", Inputs: map[string]job.Input{"lr": {Type: "number", Value: "0.1"}}}, Attempt: 1}
	if err := s.RunWrites.CreateRun(t.Context(), r, job.Event{Time: r.CreatedAt, To: job.Queued}); err != nil {
		t.Fatal(err)
	}
}

func TestAnUpdateWritesOnlyTheColumnsItChanged(t *testing.T) {
	s := open(t)
	createTestRun(t, s, "r1")
	written := recordColumnWrites(t, s)
	at := time.Unix(1700000100, 0).UTC()
	update := func(fn func(r *job.Run) []job.Event) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := s.RunWrites.UpdateRun(ctx, "r1", func(r *job.Run) ([]job.Event, error) { return fn(r), nil })
			return err
		}
	}
	tests := []struct {
		name  string
		write func(ctx context.Context) error
		want  []string
	}{
		{"heartbeat", func(ctx context.Context) error { return s.RunWrites.TouchRun(ctx, "r1", at) }, []string{"last_heartbeat"}},
		{"nothing changed", update(func(r *job.Run) []job.Event { return nil }), nil},
		{"a status transition", update(func(r *job.Run) []job.Event {
			r.Status, r.StatusReason = job.Running, "started"
			r.StartedAt = &at
			return []job.Event{{Time: at, From: job.Queued, To: job.Running}}
		}), []string{"started_at", "status", "status_reason"}},
		{"a warning", update(func(r *job.Run) []job.Event {
			r.Warnings = append(r.Warnings, "disk almost full")
			return nil
		}), []string{"warnings"}},
		{"timings and a heartbeat", update(func(r *job.Run) []job.Event {
			r.Timings = map[string]float64{"environment": 2}
			r.LastHeartbeat = at.Add(time.Second)
			return nil
		}), []string{"last_heartbeat", "timings"}},
		{"the same timings again", update(func(r *job.Run) []job.Event {
			r.Timings = map[string]float64{"environment": 2}
			return nil
		}), nil},
	}
	for _, tt := range tests {
		if err := tt.write(t.Context()); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, written()); diff != "" {
			t.Errorf("%s: columns written (-want +got):\n%s", tt.name, diff)
		}
	}
	got, err := s.Runs.Run(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.Running || got.Warnings[0] != "disk almost full" || got.Timings["environment"] != 2 ||
		!got.LastHeartbeat.Equal(at.Add(time.Second)) || got.Spec.Inputs["lr"].Value != "0.1" {
		t.Errorf("run after the updates = %+v", got)
	}
}

func TestTouchingAMissingRunIsNotFound(t *testing.T) {
	s := open(t)
	if err := s.RunWrites.TouchRun(t.Context(), "nope", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Errorf("TouchRun of a missing run = %v, want ErrNotFound", err)
	}
}

func TestARunsIDCannotChange(t *testing.T) {
	s := open(t)
	createTestRun(t, s, "r1")
	_, err := s.RunWrites.UpdateRun(t.Context(), "r1", func(r *job.Run) ([]job.Event, error) {
		r.ID = "r2"
		return nil, nil
	})
	if err == nil {
		t.Fatal("renaming a run in UpdateRun was accepted")
	}
	if _, err := s.Runs.Run(t.Context(), "r1"); err != nil {
		t.Errorf("run r1 after the refused rename: %v", err)
	}
}

// Each shape of Runs reads an index in the list's order and finds placements by key, so that
// `job list` (newest 50) and the controller's active runs cost what they return, not what the
// workspace holds: with the condition on status bound as parameters instead of written out,
// SQLite could not use the partial index runs_active and read every run ever created.
func TestRunListsReadAnIndex(t *testing.T) {
	sqliteOnly(t, "reads SQLite's EXPLAIN QUERY PLAN")
	s := open(t)
	for i := range 20 {
		createTestRun(t, s, fmt.Sprintf("r%02d", i))
	}
	tests := []struct {
		filter RunFilter
		index  string
	}{
		{RunFilter{Limit: 50}, "runs_created"},
		{RunFilter{}, "runs_created"},
		{RunFilter{Active: true}, "runs_active"},
		{RunFilter{Active: true, Compute: "local"}, "runs_active"},
	}
	for _, tt := range tests {
		q, args := runsQuery(s.dialect, tt.filter)
		plan := queryPlan(t, s, q, args...)
		joined := strings.Join(plan, "\n")
		if !slices.Contains(plan, "SCAN runs USING INDEX "+tt.index) ||
			strings.Contains(joined, "TEMP B-TREE FOR ORDER BY") ||
			!strings.Contains(joined, "SEARCH p USING INDEX") {
			t.Errorf("%+v: plan\n%s\nwant a scan of index %s in the list's order, placements found by key", tt.filter, joined, tt.index)
		}
		if got, err := s.Runs.List(t.Context(), tt.filter); err != nil || len(got) != 20 {
			t.Errorf("%+v: %d runs, %v; want 20", tt.filter, len(got), err)
		}
	}
}

// queryPlan is SQLite's plan for q, one line per step.
func queryPlan(t *testing.T, s *Store, q string, args ...any) []string {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	return out
}
