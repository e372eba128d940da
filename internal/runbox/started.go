package runbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// bubblewrap can fail to set the sandbox up when the machine's mount table changes under it:
// it copies the mounts, then remounts each one without setuid, and a mount that was removed in
// between (a container's or a Kubernetes pod's, on a node that runs them) fails the remount
// (github.com/containers/bubblewrap/issues/650). Nothing of the command has run then, so the
// sandbox is set up again.

// setupAttempts is how many times a sandbox is set up before its command counts as not started.
const setupAttempts = 5

// startedScript runs inside the sandbox once bubblewrap has set it up: it tells Start so on fd
// 3 (silently nothing where no one listens there), closes it, and becomes the command. bash (in
// POSIX mode, which reads no startup file) passes on the environment as it was given, unlike
// dash, which drops names such as A.B. It closes the holder's namespaces (fds 4 and 5, see
// pidns.go) too: bubblewrap joined them, the command needs them no more.
const startedScript = `printf x 2>/dev/null >&3; exec 3>&- 4<&- 5<&-; exec "$@"`

// setupWait bounds how long Start waits to hear that the sandbox is set up; past it the command
// is taken as started (bubblewrap is slow, not failed).
const setupWait = 30 * time.Second

// bwrapSetupFailed is bubblewrap's exit status when it dies before starting the command.
const bwrapSetupFailed = 1

// Start starts a command Command prepared. In the sandbox it returns once the command runs in
// it: a sandbox that bubblewrap could not set up is set up again (the command it returns is then
// a new one, with the same input, output and attributes; its Stdin must be nil or a file). An
// error means the command did not start; bubblewrap's own message is in its output.
func (b *Box) Start(cmd *exec.Cmd) (*exec.Cmd, error) {
	if b.sb == nil || b.sb.bash == "" || cmd.Path != b.sb.bwrap || (len(cmd.ExtraFiles) > 0 && cmd.ExtraFiles[0] != nil) {
		return cmd, cmd.Start()
	}
	return startSandboxed(cmd)
}

// startSandboxed starts a bubblewrap command whose sandbox runs startedScript before the command.
func startSandboxed(cmd *exec.Cmd) (*exec.Cmd, error) {
	for attempt := 1; ; attempt++ {
		ok, err := startListening(cmd)
		if err != nil || ok {
			return cmd, err
		}
		werr := cmd.Wait()
		if cmd.ProcessState.ExitCode() != bwrapSetupFailed || attempt == setupAttempts {
			return nil, fmt.Errorf("the sandbox was not set up (%d attempts, bubblewrap: %v)", attempt, werr)
		}
		note(cmd.Stderr, fmt.Sprintf("hangar: the sandbox was not set up (attempt %d of %d); setting it up again\n", attempt, setupAttempts))
		time.Sleep(retryPause(attempt))
		cmd = again(cmd)
	}
}

// startListening starts cmd with fd 3 open for startedScript, and reports whether the command
// started in the sandbox (false: bubblewrap exited before it).
func startListening(cmd *exec.Cmd) (bool, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return false, fmt.Errorf("pipe: %w", err)
	}
	defer r.Close()
	if len(cmd.ExtraFiles) == 0 {
		cmd.ExtraFiles = []*os.File{w}
	} else { // fd 3 was left for this (Command); the namespaces follow it
		cmd.ExtraFiles = append([]*os.File{w}, cmd.ExtraFiles[1:]...)
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return false, err
	}
	heard := make(chan bool, 1)
	go func() {
		var buf [1]byte
		n, _ := r.Read(buf[:])
		heard <- n == 1
	}()
	select {
	case ok := <-heard:
		return ok, nil
	case <-time.After(setupWait):
		return true, nil
	}
}

// again is a command like cmd, not yet started.
func again(cmd *exec.Cmd) *exec.Cmd {
	n := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, WaitDelay: cmd.WaitDelay}
	if len(cmd.ExtraFiles) > 0 {
		n.ExtraFiles = append([]*os.File{nil}, cmd.ExtraFiles[1:]...)
	}
	n.Stdin, n.Stdout, n.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
	if cmd.SysProcAttr != nil {
		attr := *cmd.SysProcAttr
		n.SysProcAttr = &attr
	}
	return n
}

// note writes a line to a command's error output, if it has one.
func note(w io.Writer, line string) {
	if w != nil {
		_, _ = io.WriteString(w, line)
	}
}

// retryPause is the pause before another attempt: short, growing.
func retryPause(attempt int) time.Duration { return time.Duration(attempt) * 20 * time.Millisecond }

// sleepCtx sleeps d, and reports false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
