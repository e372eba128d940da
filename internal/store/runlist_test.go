package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

var listEpoch = time.Unix(1700000000, 0).UTC()

// seedList creates runs r00..r(n-1), one a minute; runs 0 and 1 share a creation time so that
// orders must break ties by id.
func seedList(t *testing.T, s *Store, n int) {
	t.Helper()
	states := []job.State{job.Completed, job.Failed, job.Running, job.Queued}
	for i := range n {
		at := listEpoch.Add(time.Duration(max(i, 1)) * time.Minute)
		r := &job.Run{ID: fmt.Sprintf("r%02d", i), DisplayName: fmt.Sprintf("Train %d", i), Compute: []string{"local", "gpu"}[i%2],
			ExperimentName: []string{"mnist", "cifar", "mnist"}[i%3], Status: states[i%4], CreatedAt: at,
			Tags: map[string]string{"team": []string{"a", "b"}[i%2]}, Spec: job.Spec{Type: "command", Command: "echo"}, Attempt: 1}
		if i%5 == 0 {
			r.Tags["best"] = "yes"
		}
		if by := []string{"alice", "bob", ""}[i%3]; by != "" { // as the server stamps it
			r.Spec.Properties = map[string]string{"created_by": by}
		}
		if err := s.RunWrites.CreateRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(runs []*job.Run) []string {
	out := []string{}
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func TestRunListFilters(t *testing.T) {
	s := open(t)
	seedList(t, s, 12)
	if err := s.RunWrites.SetArchived(t.Context(), "r11", true); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		f    RunFilter
		want []string
	}{
		{"status", RunFilter{Statuses: []job.State{job.Failed}}, []string{"r09", "r05", "r01"}},
		{"two statuses", RunFilter{Statuses: []job.State{job.Failed, job.Queued}, Limit: 3}, []string{"r11", "r09", "r07"}},
		{"experiment", RunFilter{Experiment: "cifar"}, []string{"r10", "r07", "r04", "r01"}},
		{"compute and tag", RunFilter{Compute: "gpu", Tags: []TagFilter{{Key: "best"}}}, []string{"r05"}},
		{"tag value", RunFilter{Tags: []TagFilter{{Key: "team", Value: "a", HasValue: true}, {Key: "best"}}}, []string{"r10", "r00"}},
		{"since", RunFilter{Since: listEpoch.Add(10 * time.Minute)}, []string{"r11", "r10"}},
		{"query matches the display name, any case", RunFilter{Query: "tRAIN 1"}, []string{"r11", "r10", "r01"}},
		{"query matches the name", RunFilter{Query: "r0", Limit: 2}, []string{"r09", "r08"}},
		{"archived hidden", RunFilter{Archived: ArchivedHide, Limit: 2}, []string{"r10", "r09"}},
		{"submitted by a user", RunFilter{User: "alice"}, []string{"r09", "r06", "r03", "r00"}},
		{"submitted by a user, on one target", RunFilter{User: "alice", Compute: "gpu"}, []string{"r09", "r03"}},
		{"a user is a value", RunFilter{User: "x' OR '1'='1"}, []string{}},
		{"archived only", RunFilter{Archived: ArchivedOnly}, []string{"r11"}},
		{"quotes are values", RunFilter{Experiment: "x' OR '1'='1", Query: "%"}, []string{}},
		{"order by name", RunFilter{Order: "name", Limit: 3}, []string{"r00", "r01", "r02"}},
		{"oldest first, ties by name", RunFilter{Order: "created", Limit: 3}, []string{"r00", "r01", "r02"}},
		{"by status", RunFilter{Order: "status", Limit: 4}, []string{"r08", "r04", "r00", "r09"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Runs.List(t.Context(), tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("Runs(%+v) (-want +got):\n%s", tt.f, diff)
			}
		})
	}
}

// Paging through a list in any order gives the whole list once, in order.
func TestRunPagesWalkTheWholeList(t *testing.T) {
	s := open(t)
	seedList(t, s, 11)
	for _, order := range RunOrders() {
		t.Run(order, func(t *testing.T) {
			all, err := s.Runs.List(t.Context(), RunFilter{Order: order})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var after *RunCursor
			for range 10 {
				page, next, err := s.Runs.RunsPage(t.Context(), RunFilter{Order: order, Limit: 3, After: after})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ids(page)...)
				if next == nil {
					break
				}
				after = next
			}
			if diff := cmp.Diff(ids(all), got); diff != "" {
				t.Errorf("pages (-whole list +pages):\n%s", diff)
			}
		})
	}
}

// A cursor's values are bound: text that would change the statement is only a value to compare.
func TestRunCursorValuesAreBound(t *testing.T) {
	s := open(t)
	seedList(t, s, 4)
	c := &RunCursor{Order: "name", ID: "r01' OR '1'='1"}
	got, err := s.Runs.List(t.Context(), RunFilter{Order: "name", After: c})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"r02", "r03"}, ids(got)); diff != "" {
		t.Errorf("after %q (-want +got):\n%s", c.ID, diff)
	}
}

func TestDeleteRunRemovesItsRowsAndRefusesActiveRuns(t *testing.T) {
	s := open(t)
	seedList(t, s, 3) // r00 Completed, r02 Running
	ctx := t.Context()
	at := listEpoch.Add(time.Hour)
	for _, id := range []string{"r00", "r01"} {
		if _, err := s.Runs.AppendMetrics(ctx, id, []job.Metric{{Seq: 1, Name: "loss", Value: 0.5, Time: at}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Runs.AppendLogs(ctx, id, "std_log.txt", []job.LogLine{{Seq: 1, Time: at, Text: "hi"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RunWrites.UpdateRun(ctx, "r00", func(r *job.Run) ([]job.Event, error) {
		return []job.Event{{Time: at, To: job.Completed}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.RunWrites.DeleteRun(ctx, "r02"); !strings.Contains(fmt.Sprint(err), "has not ended") {
		t.Fatalf("DeleteRun(running) = %v, want ErrNotEnded", err)
	}
	if err := s.RunWrites.DeleteRun(ctx, "r00"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Runs.Run(ctx, "r00"); !strings.Contains(fmt.Sprint(err), "not found") {
		t.Errorf("Run after delete = %v, want not found", err)
	}
	for _, table := range []string{"metrics", "log_lines", "run_events"} {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE run_id = 'r00'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s rows of the deleted run: %d, %v", table, n, err)
		}
	}
	if m, err := s.Runs.LastMetricsOf(ctx, []string{"r00", "r01"}); err != nil || !cmp.Equal(m, map[string]map[string]float64{"r01": {"loss": 0.5}}) {
		t.Errorf("metrics after delete = %v, %v; want r01's alone", m, err)
	}
	if err := s.RunWrites.DeleteRun(ctx, "r00"); !strings.Contains(fmt.Sprint(err), "not found") {
		t.Errorf("second delete = %v, want not found", err)
	}
}

func TestLastMetricsOfAPage(t *testing.T) {
	s := open(t)
	seedList(t, s, 3)
	at := listEpoch.Add(time.Hour)
	add := func(id string, ms ...job.Metric) {
		if _, err := s.Runs.AppendMetrics(t.Context(), id, ms); err != nil {
			t.Fatal(err)
		}
	}
	add("r00", job.Metric{Seq: 1, Name: "loss", Value: 2, Time: at}, job.Metric{Seq: 2, Name: "acc", Value: 0.1, Time: at},
		job.Metric{Seq: 3, Name: "loss", Value: 1, Time: at})
	add("r01", job.Metric{Seq: 1, Name: "loss", Value: 7, Time: at})
	got, err := s.Runs.LastMetricsOf(t.Context(), []string{"r00", "r01", "r02"})
	want := map[string]map[string]float64{"r00": {"loss": 1, "acc": 0.1}, "r01": {"loss": 7}}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("LastMetricsOf = %v, %v; want %v", got, err, want)
	}
}

func TestBoundCommandAndArchivedSurviveUpdates(t *testing.T) {
	s := open(t)
	seedList(t, s, 1)
	ctx := t.Context()
	if err := s.RunWrites.SetBoundCommand(ctx, "r00", "python train.py --lr 0.01"); err != nil {
		t.Fatal(err)
	}
	if err := s.RunWrites.SetArchived(ctx, "r00", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunWrites.UpdateRun(ctx, "r00", func(r *job.Run) ([]job.Event, error) { r.StatusReason = "x"; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	l, err := s.Runs.Listing(ctx, "r00")
	if err != nil || l != (RunListing{Archived: true, BoundCommand: "python train.py --lr 0.01"}) {
		t.Errorf("after an update: %+v, %v", l, err)
	}
	if _, err := s.Runs.Listing(ctx, "nope"); !strings.Contains(fmt.Sprint(err), "not found") {
		t.Errorf("listing of a missing run = %v", err)
	}
	if err := s.RunWrites.SetArchived(ctx, "nope", true); !strings.Contains(fmt.Sprint(err), "not found") {
		t.Errorf("archive a missing run = %v", err)
	}
}

// The filtered lists read their index in the list's order.
func TestFilteredRunListsReadAnIndex(t *testing.T) {
	sqliteOnly(t, "reads SQLite's EXPLAIN QUERY PLAN")
	s := open(t)
	seedList(t, s, 20)
	tests := []struct {
		filter RunFilter
		index  string
	}{
		{RunFilter{Experiment: "mnist", Limit: 50}, "runs_experiment_created"},
		{RunFilter{Compute: "gpu", Limit: 50, Archived: ArchivedHide}, "runs_compute_created"},
		{RunFilter{Statuses: []job.State{job.Failed}, Limit: 50}, "runs_status_created"},
	}
	for _, tt := range tests {
		q, args := runsQuery(s.dialect, tt.filter)
		plan := strings.Join(queryPlan(t, s, q, args...), "\n")
		if !strings.Contains(plan, "USING INDEX "+tt.index) || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%+v: plan\n%s\nwant index %s in the list's order", tt.filter, plan, tt.index)
		}
	}
	if !slices.Contains(RunOrders(), "-created") {
		t.Error("RunOrders lacks the default order")
	}
}

// What a page of job list costs among 10,000 runs, with each kind of filter.
// go test -run '^$' -bench JobList ./internal/store/
func BenchmarkJobList10k(b *testing.B) {
	s, err := Open(b.Context(), b.TempDir()+"/ws.db")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.wal.fsync = func(string) error { return nil }
	queue(b, s, 10000)
	if _, err := s.db.ExecContext(b.Context(), `UPDATE runs SET status = 'Failed', experiment_name = 'rare' WHERE id LIKE '%7'`); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = fmt.Sprintf("q%05d", i)
	}
	for _, bc := range []struct {
		name string
		f    RunFilter
	}{
		{"newest 50", RunFilter{Limit: 50, Archived: ArchivedHide}},
		{"status", RunFilter{Limit: 50, Statuses: []job.State{job.Failed}, Archived: ArchivedHide}},
		{"experiment", RunFilter{Limit: 50, Experiment: "rare", Archived: ArchivedHide}},
		{"search", RunFilter{Limit: 50, Query: "q0999", Archived: ArchivedHide}},
		{"page 2 by name", RunFilter{Limit: 50, Order: "name", After: &RunCursor{Order: "name", ID: "q05000"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				if _, _, err := s.Runs.RunsPage(b.Context(), bc.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("last metrics of 50", func(b *testing.B) {
		for range b.N {
			if _, err := s.Runs.LastMetricsOf(b.Context(), ids); err != nil {
				b.Fatal(err)
			}
		}
	})
}
