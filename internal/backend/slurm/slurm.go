package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote"
	"github.com/hangar-ml/hangar/internal/runbox"
	"github.com/hangar-ml/hangar/internal/slurm"
)

// Backend submits runs to Slurm clusters. One connection (local, or SSH to the login host) is kept
// per target.
type Backend struct {
	// Root is Hangar's directory for targets without a login host: runs/<id>/, cache/blobs and the
	// hangar binary. It must be on a filesystem the compute nodes share with this machine.
	Root string
	// Exe is the hangar binary installed for the compute nodes (same OS and architecture).
	Exe string
	// ServerURL is where supervisors reach the server; with a login host it must be an address the
	// compute nodes can reach. ServerURLFile (targets without a login host) is re-read by
	// supervisors when the server moved.
	ServerURL     func() string
	ServerURLFile string
	// ServerCA is the PEM of an https server's certificate: the only one supervisors trust.
	ServerCA []byte
	// BlobDir is the server's blob store, read directly by supervisors on a shared filesystem.
	BlobDir string
	// Blobs is the same store, from which a login host's cache is filled.
	Blobs *blob.Store
	// Hide are directories of this machine runs must not see (the workspace's home) when the
	// compute nodes share its filesystem; a run always has its target's work dir hidden.
	Hide []string
	// Targets returns a target's spec with its secrets unsealed.
	Targets func(ctx context.Context, name string) (*compute.Stored, error)
	Log     *slog.Logger
	// Refresh is how long one squeue answer serves status questions (default 1s).
	Refresh time.Duration
	// HardCancelAfter is how long a canceled running job may take to end by itself before a plain
	// scancel ends it (default 5 minutes).
	HardCancelAfter time.Duration

	mu      sync.Mutex
	targets map[string]*target
}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Pender    = (*Backend)(nil)
	_ backend.Describer = (*Backend)(nil)
	_ backend.Attacher  = (*Backend)(nil)
)

func (b *Backend) refresh() time.Duration {
	if b.Refresh > 0 {
		return b.Refresh
	}
	return time.Second
}

// handle is the serialisable reference to a run: its Slurm job id is all a restarted server needs.
type handle struct {
	Target string `json:"target"`
	JobID  string `json:"job_id"`
	Dir    string `json:"dir"`
}

// Submit writes the run's supervisor config and batch script into its directory on the cluster's
// shared filesystem and submits the script with sbatch. Called again for a run already submitted
// (its handle.json, or a Slurm job with its name), it returns that job.
func (b *Backend) Submit(ctx context.Context, l backend.Launch) (backend.Handle, error) {
	t, err := b.target(ctx, l.Target.Name)
	if err != nil {
		return nil, err
	}
	dir := path.Join(t.work, "runs", l.RunID)
	if hd, ok := t.submitted(ctx, l.Target.Name, l.RunID, dir); ok {
		return json.Marshal(hd)
	}
	sub := slurm.Submission{RunID: l.RunID, Dir: dir, Hangar: t.bin, Config: path.Join(dir, "supervisor.json"),
		Target: t.spec, Job: l.Spec}
	args, err := sub.Args()
	if err != nil {
		return nil, err
	}
	cfg := api.SupervisorConfig{RunID: l.RunID, Token: l.Token, ServerURL: b.ServerURL(), Dir: dir,
		CacheDir: path.Join(t.work, "cache", "blobs"), Hide: []string{t.work}, ServerCA: string(b.ServerCA)}
	if t.client == nil {
		cfg.ServerURLFile, cfg.LocalBlobDir = b.ServerURLFile, b.BlobDir
		cfg.Hide = append(cfg.Hide, b.Hide...)
	} else if _, err := remote.SeedCache(ctx, t.r, cfg.CacheDir, b.Blobs, l.Manifests()); err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	cfgJSON, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	sbatch := t.line(append([]string{"sbatch"}, args...)...)
	for _, f := range []struct {
		name, data string
		mode       fs.FileMode
	}{
		{"supervisor.json", string(cfgJSON), 0o600},
		{"job.sh", sub.Script(), 0o755},
		{"system_logs/sbatch.txt", sbatch + "\n", 0o644}, // also makes the folder Slurm's log goes to
	} {
		if err := t.r.Put(ctx, path.Join(dir, f.name), strings.NewReader(f.data), f.mode); err != nil {
			return nil, fmt.Errorf("write %s on %s: %w", f.name, l.Target.Name, err)
		}
	}
	out, err := remote.Output(ctx, t.r, sbatch)
	if err != nil {
		return nil, fmt.Errorf("sbatch: %w", err)
	}
	id, err := slurm.ParseSbatch(string(out))
	if err != nil {
		return nil, err
	}
	t.poll.track(id)
	hd := handle{Target: l.Target.Name, JobID: id, Dir: dir}
	data, _ := json.Marshal(hd)
	if err := t.r.Put(ctx, path.Join(dir, "handle.json"), strings.NewReader(string(data)), 0o644); err != nil {
		b.Log.Warn("write handle", "run", l.RunID, "err", err) // the job is known by its name too
	}
	b.Log.Info("submitted to slurm", "run", l.RunID, "target", l.Target.Name, "job", id)
	return data, nil
}

// submitted finds the job of a run submitted before: its handle.json, else (when its job.sh was
// written, so sbatch may have run before the server stopped) a job with its name and directory.
// The directory matters: names repeat across workspaces and after a run is deleted.
func (t *target) submitted(ctx context.Context, target, runID, dir string) (handle, bool) {
	var hd handle
	if data, err := t.r.ReadFile(ctx, path.Join(dir, "handle.json")); err == nil && backend.DecodeHandle(data, &hd) == nil && hd.JobID != "" {
		return hd, true
	}
	if _, err := t.r.ReadFile(ctx, path.Join(dir, "job.sh")); err != nil {
		return hd, false // written before sbatch: without it, sbatch never ran for this run
	}
	out, err := t.output(ctx, "squeue", "--noheader", "--states=all", "--name="+slurm.JobName(runID), "--format=%i %Z")
	if err != nil {
		return hd, false
	}
	for _, l := range strings.Split(out, "\n") {
		if id, wd, ok := strings.Cut(strings.TrimSpace(l), " "); ok && wd == dir {
			hd = handle{Target: target, JobID: id, Dir: dir}
		}
	}
	return hd, hd.JobID != ""
}

// Status merges Slurm's view of the job with the supervisor's result file. A job Slurm ended
// (time limit, cancel, node failure, ...) is Final with Slurm's reason even when the supervisor
// could not report; a job whose batch script ended by itself is Final with the supervisor's result.
// A login host that does not answer is an error (the state is unknown).
func (b *Backend) Status(ctx context.Context, hb backend.Handle) (backend.Status, error) {
	hd, t, err := b.resolve(ctx, hb)
	if err != nil {
		return backend.Status{}, err
	}
	j, known, err := t.job(ctx, hd.JobID)
	if err != nil {
		return backend.Status{}, err
	}
	var res *job.Result
	if data, err := t.r.ReadFile(ctx, path.Join(hd.Dir, job.ResultFile)); err == nil {
		res, _ = job.ParseResult(data)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return backend.Status{}, fmt.Errorf("read result: %w", err)
	}
	st := merge(hd.JobID, j, known, res, time.Now().UTC())
	if st.Final != nil && res == nil { // the batch script reaped what a killed supervisor left
		if data, err := t.r.ReadFile(ctx, runbox.RecordPath(hd.Dir)); err == nil {
			if r := runbox.ReapedIn(data); r != nil {
				st.Final.Reason += "; " + r.String()
			}
		}
	}
	return st, nil
}

// merge is Status's decision, pure: Slurm's verdict on the job and the supervisor's result.
func merge(id string, j slurm.Job, known bool, res *job.Result, now time.Time) backend.Status {
	if !known {
		if res != nil {
			return backend.Status{Final: res}
		}
		return backend.Status{Reason: "Slurm no longer knows job " + id + " and the supervisor left no result"}
	}
	v := slurm.Judge(j)
	switch {
	case v.Alive:
		return backend.Status{Alive: true, Reason: v.Reason}
	case v.Killed:
		r := &job.Result{State: v.State, ExitCode: v.ExitCode, Reason: v.Reason, Time: now}
		if res != nil {
			r.Reason += fmt.Sprintf("; the supervisor had ended it as %s (%s)", res.State, res.Reason)
			r.ExitCode, r.Time = res.ExitCode, res.Time
		}
		return backend.Status{Final: r}
	case res != nil:
		return backend.Status{Final: res}
	}
	return backend.Status{Final: &job.Result{State: job.Failed, ExitCode: v.ExitCode, Time: now,
		Reason: "the supervisor ended without a result (" + v.Reason + ")"}}
}

// Pending reports whether the run's job still waits in Slurm's queue, with Slurm's reason.
func (b *Backend) Pending(ctx context.Context, hb backend.Handle) (string, bool, error) {
	hd, t, err := b.resolve(ctx, hb)
	if err != nil {
		return "", false, err
	}
	j, known, err := t.job(ctx, hd.JobID)
	if err != nil || !known {
		return "", false, err
	}
	v := slurm.Judge(j)
	return v.Reason, v.Pending, nil
}

// Cancel stops a run's job. A job still pending is cancelled (scancel). A running one gets
// `scancel --batch --signal=TERM`: only the batch step, which is the supervisor, receives SIGTERM,
// so it stops the command itself (SIGTERM to the command's process group, grace, SIGKILL), still
// collects outputs and logs, reports Canceled and ends the job (which Slurm then records as
// COMPLETED). A plain scancel (SIGTERM to every process, SIGKILL after KillWait) would reach the
// command at the same moment as the supervisor, which could then see the command exit 143 before
// it knew of the cancel and report Failed. If the job still runs HardCancelAfter later, a plain
// scancel ends it. A job that already ended is fine.
func (b *Backend) Cancel(ctx context.Context, hb backend.Handle) error {
	hd, t, err := b.resolve(ctx, hb)
	if err != nil {
		return err
	}
	t.poll.forget(hd.JobID) // ask squeue afresh: a job seen pending a moment ago may run now
	defer t.poll.forget(hd.JobID)
	j, known, err := t.job(ctx, hd.JobID)
	if err != nil {
		return err
	}
	v := slurm.Judge(j)
	switch {
	case known && !v.Alive:
		return nil
	case known && v.Pending:
		return ignoreEnded(t.scancel(ctx, hd.JobID))
	}
	if err := ignoreEnded(t.scancel(ctx, "--batch", "--signal=TERM", hd.JobID)); err != nil {
		return err
	}
	time.AfterFunc(b.hardCancelAfter(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := ignoreEnded(t.scancel(ctx, hd.JobID)); err != nil {
			b.Log.Warn("scancel", "job", hd.JobID, "err", err)
		}
	})
	return nil
}

func (t *target) scancel(ctx context.Context, args ...string) error {
	_, err := t.output(ctx, append([]string{"scancel"}, args...)...)
	return err
}

// ignoreEnded treats scancel's complaints about a job that is gone or ending as success.
func ignoreEnded(err error) error {
	if err != nil && (stderrHas(err, "Invalid job id") || stderrHas(err, "already completing or completed") ||
		stderrHas(err, "Job/step already completing")) {
		return nil
	}
	return err
}

func (b *Backend) hardCancelAfter() time.Duration {
	if b.HardCancelAfter > 0 {
		return b.HardCancelAfter
	}
	return 5 * time.Minute
}

// resolve decodes a handle and opens its target. A handle must name a Slurm job and a run
// directory of the target's work dir (Status reads the result and the box record there).
func (b *Backend) resolve(ctx context.Context, hb backend.Handle) (handle, *target, error) {
	var hd handle
	if err := backend.DecodeHandle(hb, &hd); err != nil {
		return hd, nil, err
	}
	if hd.Target == "" || hd.JobID == "" || hd.Dir == "" {
		return hd, nil, fmt.Errorf("%w: slurm handle %s lacks its target, job id or directory", backend.ErrBadHandle, hb)
	}
	t, err := b.target(ctx, hd.Target)
	if err != nil {
		return hd, nil, err
	}
	if path.Dir(hd.Dir) != path.Join(t.work, "runs") {
		return hd, nil, fmt.Errorf("%w: %s is not a run directory of %s", backend.ErrBadHandle, hd.Dir, hd.Target)
	}
	if t.client != nil {
		if err := t.client.Unreachable(hd.Target + "'s login host"); err != nil {
			return hd, nil, err
		}
	}
	return hd, t, nil
}
