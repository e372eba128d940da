package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// StoreOptions size the store group.
type StoreOptions struct {
	// Database is the URL of a new, empty PostgreSQL database for the measured workspace.
	Database string
	Jobs     int // jobs per throughput round
	Conc     int // concurrent submitters
	Reps     int // throughput rounds
	Requests int // sequential requests per latency case
}

// storeRun is one workspace's figures.
type storeRun struct {
	create, list, show, throughput []float64
}

// Stores measures the same API calls and job throughput on a workspace whose database is its
// SQLite file (the baseline, in the same invocation) and on one whose database is PostgreSQL:
// `job create` (one at a time), `job list` (newest 50) and `job show` latencies with o.Jobs runs
// in the workspace, and o.Jobs trivial jobs through the local target until all Completed.
func Stores(ctx context.Context, bin, dir string, o StoreOptions) ([]Figure, error) {
	base, err := storeMeasure(ctx, bin, filepath.Join(dir, "sqlite"), nil, o)
	if err != nil {
		return nil, fmt.Errorf("on SQLite: %w", err)
	}
	pg, err := storeMeasure(ctx, bin, filepath.Join(dir, "postgres"), []string{"HANGAR_DATABASE_URL=" + o.Database}, o)
	if err != nil {
		return nil, fmt.Errorf("on PostgreSQL: %w", err)
	}
	var figs []Figure
	add := func(name, unit string, b, p []float64, pick func([]float64) float64) {
		bf := Figure{Name: "SQLite: " + name, Value: pick(b), Unit: unit, Samples: b}
		figs = append(figs, bf, against(bf, "PostgreSQL: "+name, pick(p), unit, p))
	}
	p50 := func(v []float64) float64 { return quantile(v, 0.5) }
	p99 := func(v []float64) float64 { return quantile(v, 0.99) }
	add("job create p50", "ms", base.create, pg.create, p50)
	add("job create p99", "ms", base.create, pg.create, p99)
	add("job list (newest 50) p50", "ms", base.list, pg.list, p50)
	add("job list (newest 50) p99", "ms", base.list, pg.list, p99)
	add("job show p50", "ms", base.show, pg.show, p50)
	add("job show p99", "ms", base.show, pg.show, p99)
	add(fmt.Sprintf("%d jobs of `true`, %d submitters, until all Completed", o.Jobs, o.Conc), "jobs/s",
		base.throughput, pg.throughput, medianOf)
	return figs, nil
}

// storeMeasure starts a workspace (env selects its database) and takes its figures.
func storeMeasure(ctx context.Context, bin, dir string, env []string, o StoreOptions) (*storeRun, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w, c, err := startClient(ctx, bin, dir, env...)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	r := &storeRun{}
	for rep := 0; rep < o.Reps; rep++ {
		d, err := runJobs(ctx, c, fmt.Sprintf("bench-store-%d", rep), o.Jobs, o.Conc)
		if err != nil {
			return nil, err
		}
		r.throughput = append(r.throughput, float64(o.Jobs)/d.Seconds())
	}
	show := "bench-store-0-0"
	if r.list, r.show, err = apiLatency(ctx, c, show, o.Requests); err != nil {
		return nil, err
	}
	for i := 0; i < o.Requests; i++ {
		// The job's creation alone is timed; it runs (and ends) meanwhile, as in real use.
		sp := job.Spec{Command: "true", Compute: "local", Name: fmt.Sprintf("bench-create-%d", i)}
		d, err := timeIt(func() error { _, err := c.Jobs.Create(ctx, api.CreateJobRequest{Spec: sp}); return err })
		if err != nil {
			return nil, err
		}
		r.create = append(r.create, float64(d)/float64(time.Millisecond))
	}
	return r, waitCompleted(ctx, c, "bench-create", o.Requests, 5*time.Minute)
}
