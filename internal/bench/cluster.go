package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// ClusterOptions size the cluster group.
type ClusterOptions struct {
	Jobs int // jobs per case
	Conc int // concurrent submitters
	// Before is an older hangar binary measured the same way in the same invocation ("" for none).
	Before string
	// Slurm is the baseline cluster engine (nil when there is none on this machine).
	Slurm *SlurmCluster
}

// clusterYAML is the benchmark's cluster: two nodes of a quarter of this machine each, started
// by the local provider before anything is measured and kept (no scale-down during the cases).
const clusterYAML = `name: bench-pool
type: amlcompute
size: local-quarter
min_instances: 2
max_instances: 2
idle_time_before_scale_down: 3600
`

// Cluster measures trivial jobs (`command: true`) through a 2-node local cluster, submitted
// through the API by o.Conc clients until all o.Jobs are Completed: jobs that ask for a quarter
// of a core (resources.properties.cores: 0.25; several share a node), then jobs without a
// request (one node each, as on Azure). The baseline, in the same invocation, is Slurm draining
// as many `sbatch --wrap true` jobs on the project's 2-node test cluster (until squeue is empty);
// with o.Before, an older hangar binary is measured the same way as well.
func Cluster(ctx context.Context, bin, dir string, o ClusterOptions) ([]Figure, error) {
	var figs []Figure
	var base *Figure
	if o.Slurm != nil {
		d, err := slurmDrain(ctx, o.Slurm, o.Jobs, o.Conc)
		if err != nil {
			return nil, err
		}
		f := Figure{Name: fmt.Sprintf("baseline: Slurm drains %d `sbatch --wrap true` (2 nodes, %d submitters)", o.Jobs, o.Conc),
			Value: float64(o.Jobs) / d.Seconds(), Unit: "jobs/s", Samples: []float64{float64(o.Jobs) / d.Seconds()}}
		figs, base = append(figs, f), &f
	}
	bins := []struct{ label, path string }{{"", bin}}
	if o.Before != "" {
		bins = append([]struct{ label, path string }{{"before: ", o.Before}}, bins...)
	}
	for i, b := range bins {
		rates, err := clusterRates(ctx, b.path, filepath.Join(dir, fmt.Sprintf("cluster-%d", i)), o)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", b.label, b.path, err)
		}
		for _, c := range []struct {
			name string
			rate float64
		}{
			{fmt.Sprintf("%s%d jobs with `cores: 0.25` through a 2-node local cluster, until all Completed", b.label, o.Jobs), rates[0]},
			{fmt.Sprintf("%s%d whole-node jobs (no request) through the same cluster", b.label, o.Jobs), rates[1]},
		} {
			f := Figure{Name: c.name, Value: c.rate, Unit: "jobs/s", Samples: []float64{c.rate}}
			if base != nil {
				f = against(*base, c.name, c.rate, "jobs/s", f.Samples)
			}
			figs = append(figs, f)
		}
	}
	return figs, nil
}

// clusterRates starts a workspace of bin with the benchmark's cluster, waits for its two nodes,
// and returns the rates of the small-request case and of the whole-node case.
func clusterRates(ctx context.Context, bin, dir string, o ClusterOptions) ([2]float64, error) {
	var rates [2]float64
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rates, err
	}
	w, c, err := startClient(ctx, bin, dir)
	if err != nil {
		return rates, err
	}
	defer w.Stop()
	file := filepath.Join(dir, "cluster.yml")
	if err := os.WriteFile(file, []byte(clusterYAML), 0o644); err != nil {
		return rates, err
	}
	if _, err := w.Run(ctx, "compute", "create", "-f", file); err != nil {
		return rates, err
	}
	defer removeCluster(context.WithoutCancel(ctx), w, "bench-pool")
	if err := waitNodes(ctx, c, "bench-pool", 2); err != nil {
		return rates, err
	}
	small := job.Resources{Properties: map[string]any{"cores": 0.25}}
	if _, err := clusterJobs(ctx, c, "bench-warm", 2, 2, small); err != nil {
		return rates, err
	}
	for i, res := range []job.Resources{small, {}} {
		d, err := clusterJobs(ctx, c, fmt.Sprintf("bench-cl%d", i), o.Jobs, o.Conc, res)
		if err != nil {
			return rates, err
		}
		rates[i] = float64(o.Jobs) / d.Seconds()
	}
	return rates, nil
}

// clusterJobs submits n jobs of `true` on the benchmark's cluster, conc at a time, and waits
// until all have Completed.
func clusterJobs(ctx context.Context, c *api.Client, prefix string, n, conc int, res job.Resources) (time.Duration, error) {
	return timeJobs(ctx, c, job.Spec{Command: "true", Compute: "bench-pool", Resources: res}, prefix, n, conc, 10*time.Minute)
}

// waitNodes waits until a cluster has want idle nodes.
func waitNodes(ctx context.Context, c *api.Client, pool string, want int) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		ns, err := c.Nodes.List(ctx, pool)
		if err != nil {
			return err
		}
		idle := 0
		for _, n := range ns {
			if n.State == "idle" {
				idle++
			}
		}
		if idle == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("cluster %s: %d nodes did not join in 2 minutes", pool, want)
}

// removeCluster deletes the benchmark's cluster and waits for its nodes to go: the server stops
// their agents, which would otherwise outlive the benchmark.
func removeCluster(ctx context.Context, w *Workspace, name string) {
	if _, err := w.Run(ctx, "compute", "delete", "-n", name, "--force", "--yes"); err != nil {
		fmt.Fprintln(os.Stderr, "hangar-bench: remove the cluster:", err)
		return
	}
	// The local provider keeps a record beside each node's agent until it has stopped it.
	records := filepath.Join(w.Home, "local", "nodes", "*", "provider.json")
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if left, err := filepath.Glob(records); err == nil && len(left) == 0 {
			return
		}
	}
	fmt.Fprintln(os.Stderr, "hangar-bench: the cluster's agents did not stop within a minute")
}

// slurmDrain submits n `sbatch --wrap true` jobs, conc at a time, and times until Slurm has run
// them all (none left in squeue).
func slurmDrain(ctx context.Context, sc *SlurmCluster, n, conc int) (time.Duration, error) {
	defer sc.cancelAll(context.WithoutCancel(ctx))
	start := time.Now()
	err := parallel(n, conc, func(int) error {
		_, err := sc.cmd(ctx, "sbatch", "--parsable", "--job-name=bench-plain", "--output=/dev/null", "--wrap", "true")
		return err
	})
	if err != nil {
		return 0, err
	}
	_, done, err := pollUntil(ctx, start, func() (bool, bool, error) {
		out, err := sc.cmd(ctx, "squeue", "--noheader", "--name=bench-plain", "--format=%T")
		return true, err == nil && strings.TrimSpace(out) == "", err
	})
	return done, err
}
