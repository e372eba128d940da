package proc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/node"
)

// Proc names one process: its pid and its start time in clock ticks after boot (/proc/<pid>/stat
// field 22; 0 where it could not be read, which then matches any process with the pid). It is
// serialisable, for backend handles and provider records.
type Proc struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start_time,omitempty"`
}

// ErrGone is a signal to a process that no longer runs (or whose pid now names another).
var ErrGone = errors.New("process gone")

// Of names a running process of this machine (its start time read now).
func Of(pid int) Proc { return Proc{PID: pid, StartTime: node.ProcessStartTime(pid)} }

// Is reports whether st, what a host's /proc says of p.PID now, is p still running: not ended
// (zombie or dead), and started when p was (else the pid was reused).
func (p Proc) Is(st node.ProcStat) bool {
	return p.PID > 0 && st.PID == p.PID && st.Running() && (p.StartTime == 0 || st.StartTime == p.StartTime)
}

// Alive reports whether p still runs on this machine.
func (p Proc) Alive() bool {
	if p.PID <= 0 {
		return false
	}
	st, ok := node.Stat(p.PID)
	return ok && p.Is(st)
}

// Signal sends sig to p's process group (StartDetached made p its leader, so the children get it
// too), or to p alone when it leads none. It returns ErrGone when p no longer runs.
func (p Proc) Signal(sig syscall.Signal) error {
	if p.PID <= 1 {
		return fmt.Errorf("signal: invalid pid %d", p.PID)
	}
	if !p.Alive() {
		return fmt.Errorf("signal %d: %w", p.PID, ErrGone)
	}
	err := syscall.Kill(-p.PID, sig)
	if errors.Is(err, syscall.ESRCH) {
		err = syscall.Kill(p.PID, sig)
	}
	if errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %d: %w", p.PID, ErrGone)
	}
	if err != nil {
		return fmt.Errorf("signal %d: %w", p.PID, err)
	}
	return nil
}

// StartDetached starts cmd in a session of its own, so that it outlives this process (a server
// restart, an agent upgrade), and returns it with a channel that receives its exit (it is reaped
// here while this process lives). cmd's output should go to a file: nothing waits on pipes.
func StartDetached(cmd *exec.Cmd) (Proc, <-chan error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	if err := cmd.Start(); err != nil {
		return Proc{}, nil, err
	}
	p := Of(cmd.Process.Pid)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return p, exited, nil
}

// killWait is how long a process may take to go after SIGKILL (its exit, the kernel's cleanup).
const killWait = 5 * time.Second

// Stop ends p: SIGTERM to its group, up to grace for it to end, then SIGKILL (see Escalate).
// It returns once p has ended; an error when ctx ended first or p outlived SIGKILL.
func Stop(ctx context.Context, p Proc, grace time.Duration) error {
	done := make(chan struct{})
	watch, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(done)
		poll(watch, func() bool { return !p.Alive() })
	}()
	Escalate(ctx, grace, Target{Signal: func(sig syscall.Signal) { _ = p.Signal(sig) }, Done: done})
	after := time.NewTimer(killWait)
	defer after.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-after.C:
		return fmt.Errorf("process %d still runs after SIGKILL", p.PID)
	}
}

// poll waits until cond holds or ctx ends.
func poll(ctx context.Context, cond func() bool) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
