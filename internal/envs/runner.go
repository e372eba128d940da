package envs

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Runner runs the programs an environment build needs: interpreters probed for their version,
// venv, pip, uv, conda. What a build runs is text a user wrote (a requirement may be a local
// package whose build backend is its own code), so a node runs it where the run's own command
// runs, in the run's box (the supervisor's Runner), never with the node's own rights.
type Runner interface {
	// Run runs name with args in env to its end, its output (stdout and stderr) to out.
	Run(ctx context.Context, out io.Writer, env []string, name string, args ...string) error
}

// Direct runs programs straight on the node, for tests and tools that build on their own
// machine.
type Direct struct{}

// Run implements Runner.
func (Direct) Run(ctx context.Context, out io.Writer, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = out, out, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd.Run()
}

func runnerOr(r Runner) Runner {
	if r == nil {
		return Direct{}
	}
	return r
}

// BuildEnv is the environment of a build: the node's, without any of Hangar's own variables
// (none is for a build, and some are credentials).
func BuildEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HANGAR_") {
			out = append(out, kv)
		}
	}
	return out
}
