package supervisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hangar-ml/hangar/internal/runbox"
)

// SandboxEnv is the node's sandbox mode for the runs it executes: auto (the default: sandboxed
// where bubblewrap works, a warning on the run where not), required, or off.
const SandboxEnv = runbox.ModeEnv

// openBox makes the run's box on this node: a cgroup for every process the command starts, and a
// sandbox in which the node's Hangar directories (secrets, tokens, other runs) are hidden except
// this run's own directory and the environment cache. On a node whose Hangar processes run as
// root, the sandbox's commands run as the run user (runbox.RunUserEnv).
func (s *Supervisor) openBox(ctx context.Context, w *workspace) error {
	mode, err := runbox.ParseMode(os.Getenv(SandboxEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", SandboxEnv, err)
	}
	o := runbox.Options{
		RunID: s.cfg.RunID, Dir: s.cfg.Dir, Hide: s.cfg.Hide, Sandbox: mode,
		Share: append([]string{s.cfg.Dir, s.environment.dir()}, s.inputs.direct()...),
		// Under Slurm the job's processes stay where Slurm tracks them (it ends them with the job);
		// in a Kubernetes pod, the pod's cgroup holds them and the pod is their sandbox.
		NoCgroup: os.Getenv("SLURM_JOB_ID") != "" || s.cfg.Pod,
	}
	if s.cfg.Pod {
		o.Sandbox = runbox.SandboxOff
	}
	// Under Slurm the job already runs as the user it was submitted as, and Slurm lets only that
	// user start its steps (srun): the run user is Slurm's.
	if o.Sandbox != runbox.SandboxOff && os.Getenv("SLURM_JOB_ID") == "" {
		if o.User, err = runbox.RunUser(os.Getenv(runbox.RunUserEnv), os.Geteuid()); err != nil {
			return err
		}
	}
	if exe, err := os.Executable(); err == nil {
		o.ReadOnly = []string{exe} // `hangar mpi-rsh` and the CLI inside runs
	}
	o.ReadOnly = append(o.ReadOnly, pipPaths()...)
	if err := os.MkdirAll(s.environment.dir(), 0o755); err != nil { // shared only if it exists
		return fmt.Errorf("environment cache: %w", err)
	}
	box, warnings, err := runbox.Open(ctx, o)
	for _, m := range warnings {
		s.warn(m)
	}
	if err != nil {
		return err
	}
	w.box = box
	return s.runUserHome(w)
}

// runUserHome makes the run user a home of its own in the run's directory, and the variables
// that say who it is; everything the box runs gets them, environment builds included.
func (s *Supervisor) runUserHome(w *workspace) error {
	u := w.box.User()
	if u == nil {
		return nil
	}
	home := filepath.Join(s.cfg.Dir, "hangar", "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	if err := runbox.Chown(u, home); err != nil {
		return err
	}
	w.userVars = w.box.UserEnv(home)
	return nil
}

// pipPaths are the node's pip settings that name local files (PIP_FIND_LINKS folders, the
// PIP_CONFIG_FILE): an environment build in the sandbox reads them, so it must be shown them.
func pipPaths() []string {
	var out []string
	for _, f := range strings.Fields(os.Getenv("PIP_FIND_LINKS")) {
		f = strings.TrimPrefix(f, "file://")
		if filepath.IsAbs(f) {
			out = append(out, f)
		}
	}
	if f := os.Getenv("PIP_CONFIG_FILE"); filepath.IsAbs(f) && f != os.DevNull {
		out = append(out, f)
	}
	return out
}

// direct are the node's folders and files that inputs read in place (mode: direct, a
// local_folder datastore): the sandbox shows them to a run user who could not otherwise reach
// them through the directories above (their own permissions still apply).
func (s *inputFetcher) direct() []string {
	var out []string
	for _, in := range s.spec.Spec.Inputs {
		if in.Mode == "direct" && in.Manifest == "" && filepath.IsAbs(in.Path) {
			out = append(out, in.Path)
		}
	}
	return out
}

// endBox ends whatever the command left running and says so in the run's log.
func (s *Supervisor) endBox(ctx context.Context, w *workspace, p *pipeline) {
	if w == nil || w.box == nil {
		return
	}
	if r := w.box.End(ctx); r.Processes > 0 || r.Containers > 0 {
		fmt.Fprintf(p.capt, "hangar: %s (left running when the command ended)\n", r)
	}
}

// proc prepares one of the run's processes in its box (bare: a container runtime, which
// isolates the command itself).
func (w *workspace) proc(bare bool, env []string, name string, args ...string) *exec.Cmd {
	return w.box.Command(bare, w.dir, env, name, args...)
}

// signal sends sig to a process group the run started.
func (w *workspace) signal(pgid int, sig syscall.Signal) { w.box.Signal(pgid, sig) }

// startPiped starts cmd in the run's box with its output into the pipe pw → pr, and closes this
// process's end pw once cmd holds it (pr too when cmd does not start).
func (s *Supervisor) startPiped(w *workspace, cmd *exec.Cmd, pr, pw *os.File) (*exec.Cmd, error) {
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd, err := w.box.Start(cmd)
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, err
	}
	if err := w.box.Started(cmd); err != nil {
		s.warn(err.Error())
	}
	return cmd, nil
}

// runner runs an environment build's programs in the run's box (envs.Runner): as the run's own
// command would run, so that what a requirement's build executes has the run's rights only.
type runner struct{ w *workspace }

// Run implements envs.Runner.
func (r runner) Run(ctx context.Context, out io.Writer, env []string, name string, args ...string) error {
	cmd := r.w.proc(false, append(env, r.w.userVars...), name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd, err := r.w.box.Start(cmd)
	if err != nil {
		return err
	}
	_ = r.w.box.Started(cmd)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		r.w.signal(cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return ctx.Err()
	}
}

// giveToRunUser hands the run user what the run writes: its working directory (the code and
// outputs/, logs/), its named outputs, the inputs it may change, its checkpoint folder, the
// metrics file and a home of its own. The folders above them stay the supervisor's, so the run
// cannot swap a file the supervisor reads (the metrics file) for a link.
func (s *Supervisor) giveToRunUser(w *workspace) error {
	u := w.box.User()
	if u == nil {
		return nil
	}
	f, err := os.OpenFile(w.metricsFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("metrics file: %w", err)
	}
	f.Close()
	paths := []string{w.dir, filepath.Join(s.cfg.Dir, "named-outputs"), s.checkpoints.dir(), w.metricsFile}
	if s.spec.Spec.Parallel != nil { // the driver writes why it failed there (parallel.go)
		reason := filepath.Join(s.cfg.Dir, "hangar", parallelReasonFile)
		if err := os.WriteFile(reason, nil, 0o644); err != nil {
			return fmt.Errorf("parallel: %w", err)
		}
		paths = append(paths, reason)
	}
	for name, in := range s.spec.Spec.Inputs {
		if (in.Manifest != "" || in.Store != nil) && in.Mode != "ro_mount" && in.Mode != "" {
			dir, err := s.inputs.dir(name)
			if err != nil {
				return err
			}
			paths = append(paths, dir)
		}
	}
	return runbox.Chown(u, paths...)
}
