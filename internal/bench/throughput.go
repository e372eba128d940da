package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// Throughput measures trivial jobs (`command: true` on the local target) submitted through the
// API by conc concurrent clients until all n are Completed, reps times. The baseline, run in the
// same repetition, is the least any tool that runs each job as its own detached process pays:
// n `true` processes started in their own session (as the local backend starts a supervisor),
// conc at a time, each waited for. Hangar does more per job (a supervisor process, the sandbox,
// the run's box, status reports, the database), so the ratio says how much of the machine's
// process-starting rate it keeps.
func Throughput(ctx context.Context, w *Workspace, n, conc, reps int) ([]Figure, error) {
	c, err := w.client()
	if err != nil {
		return nil, err
	}
	if _, err := runJobs(ctx, c, "bench-tp-warm", 1, 1); err != nil {
		return nil, err
	}
	var base, hangar []float64
	var server, children, machine []float64
	for rep := 0; rep < reps; rep++ {
		d, err := detachedTrue(ctx, n, conc)
		if err != nil {
			return nil, err
		}
		base = append(base, float64(n)/d.Seconds())
		before, err := cpuNow(w.server.Process.Pid)
		if err != nil {
			return nil, err
		}
		d, err = runJobs(ctx, c, fmt.Sprintf("bench-tp-%d", rep), n, conc)
		if err != nil {
			return nil, err
		}
		time.Sleep(time.Second) // the last supervisors exit and are reaped after their run's end
		after, err := cpuNow(w.server.Process.Pid)
		if err != nil {
			return nil, err
		}
		hangar = append(hangar, float64(n)/d.Seconds())
		server = append(server, msPerJob(after.server-before.server, n))
		children = append(children, msPerJob(after.children-before.children, n))
		machine = append(machine, msPerJob(after.machine-before.machine, n))
	}
	b := Figure{Name: fmt.Sprintf("baseline: %d detached `true` processes, %d at a time", n, conc),
		Value: medianOf(base), Unit: "jobs/s", Samples: base}
	return []Figure{b,
		against(b, fmt.Sprintf("%d jobs of `true` through the API, %d submitters, until all Completed", n, conc), medianOf(hangar), "jobs/s", hangar),
		{Name: "CPU per job: the server process", Value: medianOf(server), Unit: "ms", Samples: server},
		{Name: "CPU per job: supervisors and what they start (sandbox, bash, `true`)", Value: medianOf(children), Unit: "ms", Samples: children},
		{Name: "CPU per job: the whole machine (also the kernel's threads, this benchmark, other users)", Value: medianOf(machine), Unit: "ms", Samples: machine},
	}, nil
}

// cpuSample is CPU time in clock ticks: the server's own, that of its reaped children (a
// supervisor is the server's child and waits for everything it starts), and the machine's
// busy time on all CPUs.
type cpuSample struct{ server, children, machine int64 }

func cpuNow(pid int) (cpuSample, error) {
	var c cpuSample
	var err error
	if c.server, c.children, err = procTicks(pid); err != nil {
		return c, err
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return c, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal (guest time is in user)
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return c, fmt.Errorf("/proc/stat: %q", line)
		}
		if i != 3 && i != 4 { // neither idle nor iowait
			c.machine += n
		}
	}
	return c, nil
}

func msPerJob(ticks int64, n int) float64 { return float64(ticks) * 10 / float64(n) } // a tick is 10 ms

// detachedTrue starts n `true` processes, each in its own session, conc at a time, and waits for
// every one.
func detachedTrue(ctx context.Context, n, conc int) (time.Duration, error) {
	return timeIt(func() error {
		return parallel(n, conc, func(int) error {
			cmd := exec.CommandContext(ctx, "true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			return cmd.Run()
		})
	})
}

// runJobs submits n jobs of `true` named prefix-<i> through the API, conc at a time, and waits
// until all have Completed.
func runJobs(ctx context.Context, c *api.Client, prefix string, n, conc int) (time.Duration, error) {
	return timeJobs(ctx, c, job.Spec{Command: "true", Compute: "local"}, prefix, n, conc, 5*time.Minute)
}

// timeJobs submits n jobs like sp, named prefix-<i>, through the API, conc at a time, and waits
// (up to timeout) until all have Completed: the time that took.
func timeJobs(ctx context.Context, c *api.Client, sp job.Spec, prefix string, n, conc int, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	err := parallel(n, conc, func(i int) error {
		sp := sp
		sp.Name = fmt.Sprintf("%s-%d", prefix, i)
		_, err := c.Jobs.Create(ctx, api.CreateJobRequest{Spec: sp})
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := waitCompleted(ctx, c, prefix, n, timeout); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// waitCompleted waits until the runs prefix-0 .. prefix-<n-1> have all Completed (another end is
// an error). It asks about one run at a time, in submission order, the order they mostly end
// in, so that watching costs the server little next to what it measures.
func waitCompleted(ctx context.Context, c *api.Client, prefix string, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for i := 0; i < n; {
		name := fmt.Sprintf("%s-%d", prefix, i)
		d, err := c.Jobs.Get(ctx, name)
		if err != nil {
			return err
		}
		switch {
		case d.Status == job.Completed:
			i++
			continue
		case d.Status.Terminal():
			return fmt.Errorf("run %s: %s (%s)", name, d.Status, d.StatusReason)
		case time.Now().After(deadline):
			return fmt.Errorf("%d of %d runs %s-* completed after %s", i, n, prefix, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Syncs runs one more round of n trivial jobs while strace counts the sync calls (see CountSyncs).
func Syncs(ctx context.Context, w *Workspace, dir string, n, conc int) (SyncCount, error) {
	c, err := w.client()
	if err != nil {
		return SyncCount{}, err
	}
	return CountSyncs(ctx, w.server.Process.Pid, dir, func() error {
		_, err := runJobs(ctx, c, "bench-sync", n, conc)
		return err
	})
}
