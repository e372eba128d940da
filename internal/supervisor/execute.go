package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// execute runs the phases Preparing → Starting → Running → Finalizing and returns the result.
func (s *Supervisor) execute(ctx context.Context) Result {
	s.report(job.Preparing, "materializing the code snapshot and inputs")
	w, err := s.prepare(ctx)
	var res Result
	switch {
	case err != nil && s.isCanceled():
		res = Result{State: job.Canceled, Reason: s.cancelWhy}
	case err != nil:
		s.log.Error("prepare", "err", err)
		res = Result{State: job.Failed, Reason: fmt.Sprintf("preparing: %v", err)}
	case s.isCanceled():
		res = Result{State: job.Canceled, Reason: s.cancelWhy}
	default:
		s.report(job.Starting, "starting the command")
		res = s.runCommand(ctx, w)
	}
	if err := s.finalize(ctx, w); err != nil && res.State == job.Completed {
		res = Result{State: job.Failed, ExitCode: res.ExitCode, Reason: fmt.Sprintf("finalizing: %v", err)}
	}
	res.Time = time.Now().UTC() // the run ends when its outputs are safe
	return res
}

// runCommand starts the user's command in its own process group and waits for it, enforcing
// cancel and limits.timeout.
func (s *Supervisor) runCommand(ctx context.Context, w *workspace) Result {
	logs := newShipper(filepath.Join(s.cfg.Dir, UserLogsDir, StdLogFile), logSender(s.conn, s.cfg.RunID, StdLogFile), s.log)
	metrics := newShipper(w.metricsFile, metricSender(s.conn, s.cfg.RunID, s.warn), s.log)
	w.logs, w.metrics = logs, metrics
	capt, err := newCapture(logs.t.path, logs.poke)
	if err != nil {
		return Result{State: job.Failed, Reason: fmt.Sprintf("open log: %v", err), Time: time.Now().UTC()}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		capt.close()
		return Result{State: job.Failed, Reason: fmt.Sprintf("pipe: %v", err), Time: time.Now().UTC()}
	}
	cmd := exec.Command(w.shell, "-c", w.command)
	cmd.Dir, cmd.Env = w.dir, w.env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		capt.close()
		return Result{State: job.Failed, Reason: fmt.Sprintf("start command: %v", err), Time: time.Now().UTC()}
	}
	pw.Close()
	s.report(job.Running, "")
	shipCtx, stopShipping := context.WithCancel(ctx)
	go logs.run(shipCtx)
	go metrics.run(shipCtx)
	captured := make(chan struct{})
	go func() { capt.copyFrom(pr); close(captured) }()

	res := s.wait(cmd)
	s.drainOutput(cmd.Process.Pid, pr, captured)
	capt.close()
	stopShipping()
	return res
}

// wait waits for the command, stopping its process group on cancel or timeout.
func (s *Supervisor) wait(cmd *exec.Cmd) Result {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout <-chan time.Time
	if t := s.spec.Spec.Limits.TimeoutSeconds; t > 0 {
		timer := time.NewTimer(time.Duration(t) * time.Second)
		defer timer.Stop()
		timeout = timer.C
	}
	stopReason := ""
	var err error
	select {
	case err = <-done:
	case <-s.canceled:
		stopReason = s.cancelWhy
		err = s.stopGroup(cmd.Process.Pid, done)
	case <-timeout:
		stopReason = fmt.Sprintf("canceled: the job exceeded limits.timeout (%ds)", s.spec.Spec.Limits.TimeoutSeconds)
		s.log.Info("timeout", "seconds", s.spec.Spec.Limits.TimeoutSeconds)
		err = s.stopGroup(cmd.Process.Pid, done)
	}
	code := exitCode(cmd, err)
	now := time.Now().UTC()
	if stopReason != "" {
		return Result{State: job.Canceled, ExitCode: &code, Reason: stopReason, Time: now}
	}
	if code != 0 {
		return Result{State: job.Failed, ExitCode: &code, Reason: fmt.Sprintf("the command exited with code %d", code), Time: now}
	}
	return Result{State: job.Completed, ExitCode: &code, Time: now}
}

// stopGroup sends SIGTERM to the process group, then SIGKILL after the grace period.
func (s *Supervisor) stopGroup(pgid int, done <-chan error) error {
	grace := time.Duration(s.spec.CancelGraceSeconds) * time.Second
	if grace <= 0 {
		grace = 10 * time.Second
	}
	s.log.Info("stopping the command", "signal", "SIGTERM", "grace", grace)
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case err := <-done:
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // leftovers of the group
		return err
	case <-time.After(grace):
	}
	s.log.Info("grace period over", "signal", "SIGKILL")
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return <-done
}

// drainOutput waits for the output pipe to close. Background processes of the command may hold it
// open: after a short wait they are killed, and as a last resort the pipe is closed.
func (s *Supervisor) drainOutput(pgid int, pr *os.File, captured <-chan struct{}) {
	select {
	case <-captured:
		return
	case <-time.After(2 * time.Second):
	}
	s.log.Info("processes left behind by the command hold its output; killing them")
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-captured:
		return
	case <-time.After(2 * time.Second):
	}
	pr.Close()
	<-captured
}

// exitCode is the command's exit status, 128+signal when it was killed by a signal (as shells report it).
func exitCode(cmd *exec.Cmd, err error) int {
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1
	}
	ps := cmd.ProcessState
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
