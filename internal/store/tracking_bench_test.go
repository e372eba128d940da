package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// BenchmarkSearchRuns: a metric filter and a metric order over 30,000 runs (hangar-bench's
// tracking group measures the same through the server).
func BenchmarkSearchRuns(b *testing.B) {
	s, err := Open(b.Context(), b.TempDir()+"/ws.db")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	const n = 30000
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		r := &job.Run{ID: fmt.Sprintf("run-%05d", i), Status: job.Completed, CreatedAt: time.Unix(int64(i), 0), Attempt: 1}
		args, _ := runValues(r)
		if _, err := tx.ExecContext(ctx, `INSERT INTO runs (`+runColumns+`, is_job) VALUES (?`+repeat(len(runTable)-1)+`, 0)`, args...); err != nil {
			b.Fatal(err)
		}
		if err := writeBatch(ctx, tx, r.ID, Batch{Metrics: []tracking.MetricPoint{{Key: "acc", Value: float64(i) / n, Timestamp: 1}},
			Params: []tracking.KV{{Key: "lr", Value: fmt.Sprint(i % 7)}}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	f, _ := tracking.ParseFilter("metrics.acc >= 0.5")
	o, _ := tracking.ParseOrderBy([]string{"metrics.acc DESC"})
	q := RunQuery{ExperimentIDs: []int64{0}, Stages: []string{"active"}, Order: tracking.OrderSQL(o, f), Limit: 100}
	q.Where, q.WhereArgs = f.WhereSQLFor(q.Order)
	b.ResetTimer()
	for range b.N {
		runs, _, err := s.Tracking.SearchRuns(ctx, q)
		if err != nil || len(runs) != 100 {
			b.Fatalf("%d runs, %v", len(runs), err)
		}
	}
}

func repeat(n int) string {
	out := ""
	for range n {
		out += ", ?"
	}
	return out
}
