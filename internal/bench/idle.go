package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// IdleOptions size the waiting-queue benchmark.
type IdleOptions struct {
	Queued   int           // runs left waiting
	Window   time.Duration // how long the server's CPU is sampled
	Settle   time.Duration // how long after the last submission before sampling
	Requests int           // API requests per latency case
	// Cluster queues the runs on a 1-node managed cluster whose node a long whole-node job holds
	// (the controller's Placer is then what would grow with the queue), not on a local target.
	Cluster bool
}

// Idle measures a server at rest while opts.Queued runs wait on a local target whose
// max_concurrent_runs (1) a long job holds, so that nothing changes: the server's CPU over
// opts.Window, compared with the same server before any run was queued (the long job alone),
// and the latency (p99) of `job list` (newest 50) and `job show` of a queued run, compared with
// the same requests while only the first 50 runs were queued: the same answers (50 runs, the
// same run), so that the ratio is what the queue's length costs, not the size of the answer.
// All in the same invocation.
func Idle(ctx context.Context, w *Workspace, opts IdleOptions) (cpu, latency []Figure, err error) {
	c, err := w.client()
	if err != nil {
		return nil, nil, err
	}
	target := compute.Spec{Name: "bench-one", Type: compute.TypeLocal, Local: &compute.LocalSpec{MaxConcurrentRuns: 1}}
	held := "max_concurrent_runs reached"
	if opts.Cluster {
		held = "a 1-node cluster's node held"
		if err := idleCluster(ctx, w, c, target.Name); err != nil {
			return nil, nil, err
		}
		defer removeCluster(context.WithoutCancel(ctx), w, target.Name)
	} else if _, err := c.Computes.Create(ctx, target, false); err != nil {
		return nil, nil, err
	}
	hold := job.Spec{Command: "sleep 100000", Compute: target.Name, Name: "bench-hold"}
	if _, err := c.Jobs.Create(ctx, api.CreateJobRequest{Spec: hold}); err != nil {
		return nil, nil, err
	}
	// The long job would outlive the benchmark's server (supervisors are detached).
	defer func() { _, _ = c.Jobs.Cancel(context.WithoutCancel(ctx), hold.Name) }()
	if err := waitStatus(ctx, c, hold.Name, job.Running); err != nil {
		return nil, nil, err
	}
	time.Sleep(opts.Settle)
	pid := w.server.Process.Pid
	cpuBase, err := serverCPU(pid, opts.Window)
	if err != nil {
		return nil, nil, err
	}
	const page = 50 // what `job list` shows
	first := min(page, opts.Queued)
	if err := queueRuns(ctx, c, target.Name, 0, first); err != nil {
		return nil, nil, err
	}
	listBase, showBase, err := apiLatency(ctx, c, "bench-q-0", opts.Requests)
	if err != nil {
		return nil, nil, err
	}
	if err := queueRuns(ctx, c, target.Name, first, opts.Queued); err != nil {
		return nil, nil, err
	}
	time.Sleep(opts.Settle)
	cpuQueued, err := serverCPU(pid, opts.Window)
	if err != nil {
		return nil, nil, err
	}
	list, show, err := apiLatency(ctx, c, "bench-q-0", opts.Requests)
	if err != nil {
		return nil, nil, err
	}
	b := Figure{Name: "server CPU, one run holding the target, nothing queued", Value: cpuBase, Unit: "% of a core"}
	cpu = []Figure{b, against(b, fmt.Sprintf("server CPU, %d runs waiting (%s), nothing changing", opts.Queued, held),
		cpuQueued, "% of a core", nil)}
	bl := Figure{Name: fmt.Sprintf("`job list` (newest 50), %d queued: p99", first), Value: quantile(listBase, 0.99), Unit: "ms", Samples: p50p99(listBase)}
	bs := Figure{Name: fmt.Sprintf("`job show` of a queued run, %d queued: p99", first), Value: quantile(showBase, 0.99), Unit: "ms", Samples: p50p99(showBase)}
	latency = []Figure{
		bl, against(bl, fmt.Sprintf("`job list` (newest 50), %d queued: p99", opts.Queued), quantile(list, 0.99), "ms", p50p99(list)),
		bs, against(bs, fmt.Sprintf("`job show` of a queued run, %d queued: p99", opts.Queued), quantile(show, 0.99), "ms", p50p99(show)),
	}
	return cpu, latency, nil
}

// queueRuns submits runs bench-q-<from> .. bench-q-<to-1> of `true` on target, 8 at a time.
func queueRuns(ctx context.Context, c *api.Client, target string, from, to int) error {
	return parallel(to-from, 8, func(i int) error {
		sp := job.Spec{Command: "true", Compute: target, Name: fmt.Sprintf("bench-q-%d", from+i)}
		_, err := c.Jobs.Create(ctx, api.CreateJobRequest{Spec: sp})
		return err
	})
}

// p50p99 are the samples a latency figure shows: its median and p99.
func p50p99(ms []float64) []float64 { return []float64{quantile(ms, 0.5), quantile(ms, 0.99)} }

// waitStatus polls a run until it is in state want (an end in another state is an error).
func waitStatus(ctx context.Context, c *api.Client, name string, want job.State) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		d, err := c.Jobs.Get(ctx, name)
		if err != nil {
			return err
		}
		if d.Status == want {
			return nil
		}
		if d.Status.Terminal() {
			return fmt.Errorf("run %s: %s (%s)", name, d.Status, d.StatusReason)
		}
	}
	return fmt.Errorf("run %s: not %s after 2 minutes", name, want)
}

// apiLatency times n `job list` (newest 50) and n `job show` of one run, one request at a time,
// in milliseconds.
func apiLatency(ctx context.Context, c *api.Client, show string, n int) (list, shows []float64, err error) {
	for i := 0; i < n; i++ {
		d, err := timeIt(func() error { _, err := c.Jobs.List(ctx, 50); return err })
		if err != nil {
			return nil, nil, err
		}
		list = append(list, float64(d)/float64(time.Millisecond))
		d, err = timeIt(func() error { _, err := c.Jobs.Get(ctx, show); return err })
		if err != nil {
			return nil, nil, err
		}
		shows = append(shows, float64(d)/float64(time.Millisecond))
	}
	return list, shows, nil
}

// serverCPU samples a process's CPU time (user + system, all threads) over window and returns it
// as a percentage of one core.
func serverCPU(pid int, window time.Duration) (float64, error) {
	t0, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	time.Sleep(window)
	t1, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return float64(t1-t0) / ticksPerSecond / time.Since(start).Seconds() * 100, nil
}

// cpuTicks is a process's CPU time (utime + stime of /proc/<pid>/stat).
func cpuTicks(pid int) (int64, error) {
	own, _, err := procTicks(pid)
	return own, err
}

// procTicks reads a process's own CPU time (utime + stime) and that of its children it waited
// for (cutime + cstime) from /proc/<pid>/stat.
func procTicks(pid int) (own, children int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may hold spaces: count fields after its closing parenthesis.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var t [4]int64 // utime, stime, cutime, cstime: fields 14 to 17
	for i := range t {
		if t[i], err = strconv.ParseInt(f[11+i], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/stat: field %d: %w", pid, 14+i, err)
		}
	}
	return t[0] + t[1], t[2] + t[3], nil
}

// idleCluster creates the idle group's 1-node cluster and waits for its node.
func idleCluster(ctx context.Context, w *Workspace, c *api.Client, name string) error {
	file := filepath.Join(filepath.Dir(w.Home), "idle-cluster.yml")
	spec := "name: " + name + "\ntype: amlcompute\nsize: local-quarter\nmin_instances: 1\nmax_instances: 1\nidle_time_before_scale_down: 3600\n"
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		return err
	}
	if _, err := w.Run(ctx, "compute", "create", "-f", file); err != nil {
		return err
	}
	return waitNodes(ctx, c, name, 1)
}
