package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/hangar-ml/hangar/internal/runbox"
)

// SandboxEnv is the node's sandbox mode for the runs it executes: auto (the default: sandboxed
// where bubblewrap works, a warning on the run where not), required, or off.
const SandboxEnv = runbox.ModeEnv

// openBox makes the run's box on this node: a cgroup for every process the command starts, and a
// sandbox in which the node's Hangar directories (secrets, tokens, other runs) are hidden except
// this run's own directory and the environment cache.
func (s *Supervisor) openBox(ctx context.Context, w *workspace) error {
	mode, err := runbox.ParseMode(os.Getenv(SandboxEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", SandboxEnv, err)
	}
	o := runbox.Options{
		RunID: s.cfg.RunID, Dir: s.cfg.Dir, Hide: s.cfg.Hide, Sandbox: mode,
		Share: []string{s.cfg.Dir, s.envDir()},
		// Under Slurm the job's processes stay where Slurm tracks them (it ends them with the job);
		// in a Kubernetes pod, the pod's cgroup holds them and the pod is their sandbox.
		NoCgroup: os.Getenv("SLURM_JOB_ID") != "" || s.cfg.Pod,
	}
	if s.cfg.Pod {
		o.Sandbox = runbox.SandboxOff
	}
	if exe, err := os.Executable(); err == nil {
		o.ReadOnly = []string{exe} // `hangar mpi-rsh` and the CLI inside runs
	}
	box, warnings, err := runbox.Open(ctx, o)
	for _, m := range warnings {
		s.warn(m)
	}
	if err != nil {
		return err
	}
	w.box = box
	return nil
}

// endBox ends whatever the command left running and says so in the run's log.
func (s *Supervisor) endBox(ctx context.Context, w *workspace, p *pipeline) {
	if w.box == nil {
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
