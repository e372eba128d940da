package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// PreemptOptions size the preemption group.
type PreemptOptions struct {
	Steps       int           // the job's steps, 4 a second
	Preemptions int           // preemptions per run
	After       time.Duration // how far into each attempt a preemption comes
	Intervals   []int         // periodic checkpoint intervals measured, in seconds
}

// preemptJob counts to $STEPS (4 a second), keeping its step in HANGAR_CHECKPOINT_DIR and
// starting from the step found there: the work a preemption costs is the steps it redoes.
const preemptJob = `command: |
  step=0
  if [ -f "$HANGAR_CHECKPOINT_DIR/step" ]; then step=$(cat "$HANGAR_CHECKPOINT_DIR/step"); fi
  echo "starting at step $step"
  while [ "$step" -lt "$STEPS" ]; do
    step=$((step + 1))
    echo "$step" > "$HANGAR_CHECKPOINT_DIR/step.tmp" && mv "$HANGAR_CHECKPOINT_DIR/step.tmp" "$HANGAR_CHECKPOINT_DIR/step"
    echo "step $step"
    sleep 0.25
  done
compute: spot
`

// preemptCluster is a low-priority cluster of one-node capacity whose machines are `hangar
// agent`s on this machine, started by the command provider's example hooks; its preempted
// hook lists the machine ids written to the file preempted.
const preemptCluster = `name: spot
type: amlcompute
size: local-quarter
tier: low_priority
max_instances: 1
idle_time_before_scale_down: 600
provider:
  type: command
  create: %[1]s/create.sh
  delete: %[1]s/delete.sh
  preempted: cat %[2]s 2>/dev/null || true
  env:
    HANGAR_EXE: %[3]s
    TMPDIR: %[4]s
`

// preemptCase is one way of running the job: its checkpoint interval, and whether the node's
// agent gets the cloud's notice (SIGUSR1) before its machine goes.
type preemptCase struct {
	name     string
	interval int
	notice   bool
	preempt  bool
}

// preemptResult is what one case cost.
type preemptResult struct {
	wall        time.Duration
	lost        []float64 // seconds per preemption, as the run detail reports it
	redoneSteps int       // steps done twice, from the job's own log
}

// Preemption runs the same job on a real low-priority cluster (agents on this machine) with
// o.Preemptions preemptions each o.After into an attempt, without checkpoints (the baseline, in
// the same invocation), with periodic checkpoints, and with the notice only, plus once without
// preemption for the job's own time. Work lost is read twice: the run detail's lost seconds
// (what job show says) and the steps the job redid (its log's "starting at step" lines against
// the steps it had reached).
func Preemption(ctx context.Context, bin, dir, repo string, o PreemptOptions) ([]Figure, error) {
	w, err := Start(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	hooks := filepath.Join(repo, "examples", "cluster", "local-agent")
	marks := filepath.Join(dir, "preempted")
	yml := filepath.Join(dir, "spot.yml")
	if err := os.WriteFile(yml, []byte(fmt.Sprintf(preemptCluster, hooks, marks, bin, dir)), 0o644); err != nil {
		return nil, err
	}
	if _, err := w.Run(ctx, "compute", "create", "-f", yml); err != nil {
		return nil, err
	}
	defer removeCluster(context.WithoutCancel(ctx), w, "spot")
	c, err := w.client()
	if err != nil {
		return nil, err
	}
	cases := []preemptCase{{name: "no preemption", interval: 0}, {name: "no checkpoints", interval: 0, preempt: true}}
	for _, iv := range o.Intervals {
		cases = append(cases, preemptCase{name: fmt.Sprintf("checkpoint every %d s", iv), interval: iv, preempt: true})
	}
	cases = append(cases, preemptCase{name: "notice only (SIGUSR1, no periodic save)", interval: 0, notice: true, preempt: true})
	var figs []Figure
	var base *Figure
	for i, pc := range cases {
		r, err := runPreemptCase(ctx, w, c, dir, marks, fmt.Sprintf("bench-preempt-%d", i), pc, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pc.name, err)
		}
		figs = append(figs, Figure{Name: pc.name + ": submit to Completed", Value: r.wall.Seconds(), Unit: "s",
			Samples: []float64{r.wall.Seconds()}})
		if !pc.preempt {
			continue
		}
		name := pc.name + ": work lost per preemption (job show)"
		f := Figure{Name: name, Value: medianOf(r.lost), Unit: "s", Samples: r.lost}
		if base == nil {
			b := f
			base = &b
		} else {
			f = against(*base, name, f.Value, "s", r.lost)
		}
		figs = append(figs, f, Figure{Name: pc.name + ": steps redone in all (0.25 s each)", Value: float64(r.redoneSteps),
			Unit: "steps", Samples: []float64{float64(r.redoneSteps)}})
	}
	return figs, nil
}

// runPreemptCase submits the job and preempts its node o.After into each of o.Preemptions
// attempts, then waits for it to complete.
func runPreemptCase(ctx context.Context, w *Workspace, c *api.Client, dir, marks, name string, pc preemptCase, o PreemptOptions) (preemptResult, error) {
	var r preemptResult
	file := filepath.Join(dir, name+".yml")
	env := fmt.Sprintf("environment_variables: {STEPS: %q, HANGAR_CHECKPOINT_INTERVAL_SECONDS: %q}\nname: %s\n",
		strconv.Itoa(o.Steps), strconv.Itoa(pc.interval), name)
	if err := os.WriteFile(file, []byte(preemptJob+env), 0o644); err != nil {
		return r, err
	}
	start := time.Now()
	if _, err := w.Run(ctx, "job", "create", "-f", file); err != nil {
		return r, err
	}
	for n := 1; pc.preempt && n <= o.Preemptions; n++ {
		if err := preemptAttempt(ctx, c, name, marks, n, pc.notice, o.After); err != nil {
			return r, fmt.Errorf("preemption %d: %w", n, err)
		}
	}
	d, err := waitRun(ctx, c, name, 10*time.Minute)
	if err != nil {
		return r, err
	}
	r.wall = time.Since(start)
	if d.Status != job.Completed {
		return r, fmt.Errorf("run %s ended %s: %s", name, d.Status, d.StatusReason)
	}
	for _, p := range d.Preemptions {
		r.lost = append(r.lost, p.LostSeconds)
	}
	if pc.preempt && len(r.lost) != o.Preemptions {
		return r, fmt.Errorf("run %s shows %d preemptions, want %d", name, len(r.lost), o.Preemptions)
	}
	r.redoneSteps, err = redoneSteps(ctx, c, name, d.Attempt, o.Steps)
	return r, err
}

// preemptAttempt waits until attempt n has run for after, then takes its node away: with the
// notice, SIGUSR1 to the node's agent first (a spot watcher's signal; the example hook's
// provider id is the agent's pid), then the provider's preempted hook lists the machine.
func preemptAttempt(ctx context.Context, c *api.Client, name, marks string, n int, notice bool, after time.Duration) error {
	var runID string
	err := pollFor(ctx, 3*time.Minute, func() (bool, error) {
		d, err := c.Jobs.Get(ctx, name)
		if err != nil || d.Attempt != n || d.Status != job.Running {
			return false, err
		}
		runID = d.ID
		return time.Since(attemptStart(d)) >= after, nil
	})
	if err != nil {
		return err
	}
	nodes, err := c.Nodes.List(ctx, "spot")
	if err != nil {
		return err
	}
	pid := ""
	for _, nd := range nodes {
		for _, ar := range nd.Runs {
			if ar.RunID == runID {
				pid = nd.ProviderID
			}
		}
	}
	if pid == "" {
		return fmt.Errorf("no node with a machine id runs %s", name)
	}
	if notice {
		p, err := strconv.Atoi(pid)
		if err != nil {
			return fmt.Errorf("machine id %q is not the agent's pid: %w", pid, err)
		}
		if err := syscall.Kill(p, syscall.SIGUSR1); err != nil {
			return err
		}
		// The supervisors save and the run is requeued; the machine then goes as without notice.
		if err := pollFor(ctx, time.Minute, func() (bool, error) {
			d, err := c.Jobs.Get(ctx, name)
			return err == nil && d.Attempt > n, err
		}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(marks, []byte(pid+"\n"), 0o644); err != nil {
		return err
	}
	return pollFor(ctx, 2*time.Minute, func() (bool, error) {
		d, err := c.Jobs.Get(ctx, name)
		return err == nil && d.Attempt > n, err
	})
}

// attemptStart is when the run last became Running (the run's StartedAt is its first start).
func attemptStart(d *api.RunDetail) time.Time {
	var t time.Time
	for _, ev := range d.Events {
		if ev.To == job.Running {
			t = ev.Time
		}
	}
	return t
}

// redoneSteps reads the run's logs, each attempt's own (a requeue keeps attempt N's log as
// attempt_N/): an attempt that starts at step S after an attempt that reached step R redid R-S.
func redoneSteps(ctx context.Context, c *api.Client, name string, attempts, steps int) (int, error) {
	redone, reached := 0, 0
	for a := 1; a <= attempts; a++ {
		file := "std_log.txt"
		if a < attempts {
			file = fmt.Sprintf("attempt_%d/std_log.txt", a)
		}
		resp, err := c.Jobs.Logs(ctx, name, file, 0, 0)
		if err != nil {
			return 0, fmt.Errorf("log of attempt %d: %w", a, err)
		}
		from, top := -1, 0
		for _, l := range resp.Lines {
			line := strings.TrimSpace(l.Text)
			if s, ok := strings.CutPrefix(line, "starting at step "); ok && from < 0 {
				from, _ = strconv.Atoi(s)
			} else if s, ok := strings.CutPrefix(line, "step "); ok {
				if n, err := strconv.Atoi(s); err == nil {
					top = max(top, n)
				}
			}
		}
		if from < 0 {
			return 0, fmt.Errorf("the log of %s's attempt %d has no \"starting at step\" line", name, a)
		}
		redone += max(0, reached-from)
		reached = max(reached, top)
	}
	if reached != steps {
		return 0, fmt.Errorf("the logs of %s reach step %d, want %d", name, reached, steps)
	}
	return redone, nil
}

// waitRun waits for a run to end.
func waitRun(ctx context.Context, c *api.Client, name string, limit time.Duration) (*api.RunDetail, error) {
	var d *api.RunDetail
	err := pollFor(ctx, limit, func() (bool, error) {
		var err error
		d, err = c.Jobs.Get(ctx, name)
		return err == nil && d.Status.Terminal(), err
	})
	return d, err
}

// pollFor calls done every 200 ms until it answers true, fails, or limit passes.
func pollFor(ctx context.Context, limit time.Duration, done func() (bool, error)) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("not within %s", limit)
}
