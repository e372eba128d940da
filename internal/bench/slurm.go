package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
)

// SlurmCluster is the test cluster of scripts/setup/slurm.sh (started when it is not running).
type SlurmCluster struct{ Conf string }

// StartSlurm runs the project's setup script, which starts the two-node cluster when needed and
// prints its slurm.conf.
func StartSlurm(ctx context.Context, repo string) (*SlurmCluster, error) {
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(repo, "scripts/setup/slurm.sh")).Output()
	if err != nil {
		return nil, fmt.Errorf("start slurm: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return &SlurmCluster{Conf: lines[len(lines)-1]}, nil
}

func (s *SlurmCluster) cmd(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+s.Conf)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// cancelAll cancels the benchmark's jobs still in Slurm (after an error).
func (s *SlurmCluster) cancelAll(ctx context.Context) {
	out, _ := s.cmd(ctx, "squeue", "--noheader", "--format=%i %j")
	for _, l := range strings.Split(out, "\n") {
		if id, name, ok := strings.Cut(strings.TrimSpace(l), " "); ok && (name == "bench-plain" || strings.HasPrefix(name, "hangar-bench-")) {
			_, _ = s.cmd(ctx, "scancel", id)
		}
	}
}

// Slurm compares a short job (`true`) through Hangar on a Slurm target with plain sbatch of the
// same command on the same cluster: the latency from submission to running (the first state at or
// past RUNNING/Running) and to completion, n times each, interleaved; then the throughput of
// `many` submissions, 8 at a time, until all are accepted and until all have ended. Both sides are
// watched the same way (a poll every 20 ms: squeue, or the API).
func Slurm(ctx context.Context, w *Workspace, sc *SlurmCluster, dir string, n, many int) ([]Row, error) {
	spec := fmt.Sprintf("name: bench-slurm\ntype: slurm\npartition: debug\nslurm_conf: %s\n", sc.Conf)
	files := map[string]string{"slurm.yml": spec, "true.yml": "command: \"true\"\ncompute: bench-slurm\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	if _, err := w.Run(ctx, "compute", "attach", "-f", filepath.Join(dir, "slurm.yml")); err != nil {
		return nil, err
	}
	c, err := w.client()
	if err != nil {
		return nil, err
	}
	defer sc.cancelAll(context.WithoutCancel(ctx))
	jobFile := filepath.Join(dir, "true.yml")
	hangarOne := func(name string) (run, done time.Duration, err error) {
		start := time.Now()
		if _, err := w.Run(ctx, "job", "create", "-f", jobFile, "--name", name); err != nil {
			return 0, 0, err
		}
		return pollUntil(ctx, start, func() (bool, bool, error) {
			d, err := c.Jobs.Get(ctx, name)
			if err != nil {
				return false, false, err
			}
			return d.Status == job.Running || d.Status == job.Finalizing || d.Status.Terminal(), d.Status.Terminal(), nil
		})
	}
	plainOne := func() (run, done time.Duration, err error) {
		start := time.Now()
		out, err := sc.cmd(ctx, "sbatch", "--parsable", "--job-name=bench-plain", "--output=/dev/null", "--wrap", "true")
		if err != nil {
			return 0, 0, err
		}
		id := strings.TrimSpace(out)
		return pollUntil(ctx, start, func() (bool, bool, error) {
			st, err := sc.cmd(ctx, "squeue", "--noheader", "--states=all", "--jobs="+id, "--format=%T")
			switch st = strings.TrimSpace(st); st {
			case "", "PENDING", "CONFIGURING":
				return false, false, err
			case "RUNNING", "COMPLETING":
				return true, false, err
			}
			return true, true, err
		})
	}
	if _, _, err := hangarOne("bench-warmup"); err != nil {
		return nil, err
	}
	var pRun, pDone, hRun, hDone []time.Duration
	for i := 0; i < n; i++ {
		r, d, err := plainOne()
		if err != nil {
			return nil, err
		}
		pRun, pDone = append(pRun, r), append(pDone, d)
		r, d, err = hangarOne(fmt.Sprintf("bench-lat-%d", i))
		if err != nil {
			return nil, err
		}
		hRun, hDone = append(hRun, r), append(hDone, d)
	}
	rows := pair("`sbatch --wrap true`: submit → RUNNING", pRun, "`hangar job create` of `true`: submit → Running", hRun)
	rows = append(rows, pair("`sbatch --wrap true`: submit → COMPLETED", pDone, "`hangar job create` of `true`: submit → Completed", hDone)...)
	tp, err := slurmThroughput(ctx, w, c, sc, jobFile, many)
	return append(rows, tp...), err
}

// slurmThroughput submits `many` jobs each way, 8 at a time, and times until all are accepted and
// until all have ended.
func slurmThroughput(ctx context.Context, w *Workspace, c *api.Client, sc *SlurmCluster, jobFile string, many int) ([]Row, error) {
	start := time.Now()
	err := parallel(many, 8, func(i int) error {
		_, err := sc.cmd(ctx, "sbatch", "--parsable", "--job-name=bench-plain", "--output=/dev/null", "--wrap", "true")
		return err
	})
	if err != nil {
		return nil, err
	}
	pAccepted := time.Since(start)
	_, pDone, err := pollUntil(ctx, start, func() (bool, bool, error) {
		out, err := sc.cmd(ctx, "squeue", "--noheader", "--name=bench-plain", "--format=%T")
		return true, err == nil && strings.TrimSpace(out) == "", err
	})
	if err != nil {
		return nil, err
	}
	start = time.Now()
	err = parallel(many, 8, func(i int) error {
		_, err := w.Run(ctx, "job", "create", "-f", jobFile, "--name", fmt.Sprintf("bench-many-%d", i))
		return err
	})
	if err != nil {
		return nil, err
	}
	hAccepted := time.Since(start)
	_, hDone, err := pollUntil(ctx, start, func() (bool, bool, error) {
		list, err := c.Jobs.List(ctx, many+100)
		if err != nil {
			return false, false, err
		}
		ended := 0
		for _, d := range list {
			if strings.HasPrefix(d.ID, "bench-many-") && d.Status.Terminal() {
				if d.Status != job.Completed {
					return false, false, fmt.Errorf("run %s: %s (%s)", d.ID, d.Status, d.StatusReason)
				}
				ended++
			}
		}
		return true, ended == many, nil
	})
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("%d jobs, 8 submitters", many)
	rows := pair(fmt.Sprintf("%s: `sbatch`, all accepted", what), []time.Duration{pAccepted},
		fmt.Sprintf("%s: `hangar job create`, all accepted (Queued)", what), []time.Duration{hAccepted})
	return append(rows, pair(fmt.Sprintf("%s: `sbatch`, all ended", what), []time.Duration{pDone},
		fmt.Sprintf("%s: `hangar job create`, all Completed", what), []time.Duration{hDone})...), nil
}

// pair is a baseline row and a row measured against it.
func pair(base string, b []time.Duration, name string, h []time.Duration) []Row {
	br := baselineRow(base, b)
	return []Row{br, br.against(name, h)}
}

// baselineRow is a row of samples that others are measured against (no bytes counted).
func baselineRow(name string, samples []time.Duration) Row {
	return Row{Name: name, Median: median(samples), Samples: samples, Bytes: -1, Ratio: 1}
}

// against is a row of samples measured against the baseline b (no bytes counted).
func (b Row) against(name string, samples []time.Duration) Row {
	r := baselineRow(name, samples)
	r.Baseline, r.Ratio = b.Name, float64(r.Median)/float64(b.Median)
	return r
}

// pollUntil polls every 20 ms; it returns the time from start until check first said running, and
// until it said done.
func pollUntil(ctx context.Context, start time.Time, check func() (running, done bool, err error)) (time.Duration, time.Duration, error) {
	var run time.Duration
	for deadline := start.Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r, d, err := check()
		if err != nil {
			return 0, 0, err
		}
		if r && run == 0 {
			run = time.Since(start)
		}
		if d {
			return run, time.Since(start), nil
		}
		if ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
	}
	return 0, 0, fmt.Errorf("not done after 10 minutes")
}

// parallel runs fn(0..n-1) with at most k at once and returns the first error.
func parallel(n, k int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for w := 0; w < k; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// client is an API client for the workspace (directly, not through the counting proxy).
func (w *Workspace) client() (*api.Client, error) {
	si, tok, err := home.Home{Dir: w.Home}.ReadServer()
	if err != nil {
		return nil, err
	}
	return api.NewClient(si.URL, tok), nil
}
