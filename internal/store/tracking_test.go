package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// A workspace from before migration 0008 keeps its runs' history: experiments are made from
// the runs' experiment names, spec tags become MLflow tags, the metrics table keeps every
// point (rebuilt with its writer column) and each metric's latest point is MLflow's.
func TestMigrationToTracking(t *testing.T) {
	sqliteOnly(t, "a workspace from before 0008 is a SQLite file (PostgreSQL workspaces start at the current schema)")
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ws.db")
	db := sql.OpenDB(mustConnector(t, path))
	for _, stmt := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for v, name := range []string{"0001_init.sql", "0002_environments.sql", "0003_clusters.sql", "0004_attempts.sql",
		"0005_run_parts.sql", "0006_cluster_state.sql", "0007_active_runs.sql"} {
		body, err := migrationFiles.ReadFile("migrations/sqlite/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, 0)`, v+1); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct{ id, exp, tags string }{{"a", "sweeps", `{"team":"x"}`}, {"b", "", `{}`}, {"c", "sweeps", `{}`}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO runs (id, experiment_name, tags, compute, status, created_at, spec)
			VALUES (?, ?, ?, 'local', 'Completed', 1, '{}')`, r.id, r.exp, r.tags); err != nil {
			t.Fatal(err)
		}
	}
	sec := int64(time.Second)
	for _, m := range []struct {
		seq  int64
		name string
		v    float64
		step int64
		t    int64
	}{{1, "loss", 2, 0, sec}, {2, "loss", 1, 1, 2 * sec}, {3, "loss", 5, 0, 3 * sec}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO metrics (run_id, seq, name, value, step, time) VALUES ('a', ?, ?, ?, ?, ?)`,
			m.seq, m.name, m.v, m.step, m.t); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, err := s.Tracking.ExperimentByName(ctx, "sweeps")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"a": e.ID, "b": "0", "c": e.ID} {
		r, err := s.Tracking.TrackingRun(ctx, id)
		if err != nil || r.Info.ExperimentID != want {
			t.Errorf("run %s: experiment %v, %v; want %s", id, r, err, want)
		}
	}
	r, err := s.Tracking.TrackingRun(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Step 1 is the latest by MLflow's rule, though step 0 was logged after it.
	want := tracking.RunData{Metrics: []tracking.MetricPoint{{Key: "loss", Value: 1, Timestamp: 2000, Step: 1}},
		Tags: []tracking.KV{{Key: "team", Value: "x"}}}
	if diff := cmp.Diff(want, r.Data); diff != "" {
		t.Errorf("run a (-want +got):\n%s", diff)
	}
	hist, _, err := s.Tracking.MetricHistory(ctx, "a", "loss", 0, 10)
	if err != nil || len(hist) != 3 {
		t.Errorf("history = %v, %v", hist, err)
	}
	// The supervisor's next lines append to the same history, idempotently.
	for range 2 {
		if _, err := s.Runs.AppendMetrics(ctx, "a", []job.Metric{{Seq: 4, Name: "loss", Value: 0.5, Step: 2, Time: time.Unix(4, 0)}}); err != nil {
			t.Fatal(err)
		}
	}
	if hist, _, _ = s.Tracking.MetricHistory(ctx, "a", "loss", 0, 10); len(hist) != 4 {
		t.Errorf("history after a resend = %v", hist)
	}
}

func mustConnector(t *testing.T, path string) driver.Connector {
	t.Helper()
	c, err := newCachingConnector(sqliteDSN(path, "_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Concurrent batches are committed together; one refused batch (a changed param, an unknown
// run) writes nothing and leaves the others written.
func TestLogBatchGroupCommit(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	now := time.Now()
	for _, id := range []string{"r1", "r2"} {
		if err := s.RunWrites.CreateTrackingRun(ctx, &job.Run{ID: id, Status: job.Running, CreatedAt: now, Attempt: 1}, "0", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RunWrites.LogBatch(ctx, "r1", Batch{Params: []tracking.KV{{Key: "lr", Value: "1"}}}); err != nil {
		t.Fatal(err)
	}
	reqs := []*logRequest{
		{run: "r1", batch: Batch{Metrics: []tracking.MetricPoint{{Key: "m", Value: 1, Timestamp: 1}}, Params: []tracking.KV{{Key: "lr", Value: "2"}}}},
		{run: "ghost", batch: Batch{Tags: []tracking.KV{{Key: "t", Value: "v"}}}},
		{run: "r2", batch: Batch{Metrics: []tracking.MetricPoint{{Key: "m", Value: 2, Timestamp: 1}}, Tags: []tracking.KV{{Key: "t", Value: "v"}}}},
	}
	for _, r := range reqs {
		r.done = make(chan error, 1)
	}
	s.RunWrites.writeBatches(context.Background(), reqs)
	errs := []error{<-reqs[0].done, <-reqs[1].done, <-reqs[2].done}
	if !isUserError(errs[0]) || !isUserError(errs[1]) || errs[2] != nil {
		t.Fatalf("errors = %v", errs)
	}
	r1, _ := s.Tracking.TrackingRun(ctx, "r1")
	r2, _ := s.Tracking.TrackingRun(ctx, "r2")
	if len(r1.Data.Metrics) != 0 || r1.Data.Params[0].Value != "1" {
		t.Errorf("refused batch wrote: %+v", r1.Data)
	}
	if len(r2.Data.Metrics) != 1 || len(r2.Data.Tags) != 1 {
		t.Errorf("the good batch: %+v", r2.Data)
	}
}

// A search that filters on a metric and orders by it reads latest_metrics_value in the order
// of the page and stops at its end, whatever the number of runs; only the ties are sorted
// (30,000 runs: 8 ms, against 90 ms when every match was sorted).
func TestSearchReadsMetricIndexInOrder(t *testing.T) {
	sqliteOnly(t, "reads SQLite's EXPLAIN QUERY PLAN")
	s := open(t)
	f, err := tracking.ParseFilter("metrics.acc >= 0.5 AND params.lr = '0.1'")
	if err != nil {
		t.Fatal(err)
	}
	o, err := tracking.ParseOrderBy([]string{"metrics.acc DESC"})
	if err != nil {
		t.Fatal(err)
	}
	q := RunQuery{ExperimentIDs: []int64{0}, Stages: []string{"active"}, Order: tracking.OrderSQL(o, f), Limit: 100}
	q.Where, q.WhereArgs = f.WhereSQLFor(q.Order)
	stmt, args := searchStatement(q)
	plan, err := queryAll(t.Context(), s.db, func(sc scanner) (string, error) {
		var id, parent, unused int
		var detail string
		err := sc.Scan(&id, &parent, &unused, &detail)
		return detail, err
	}, "EXPLAIN QUERY PLAN "+stmt, args...)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(plan[0], "latest_metrics_value") || strings.Contains(text, "USE TEMP B-TREE FOR ORDER BY") {
		t.Errorf("plan of %s:\n%s\nwant latest_metrics_value read first, in order", stmt, text)
	}
}
