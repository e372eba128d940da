package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/proc"
)

// execute runs the phases Preparing → Starting → Running → Finalizing and returns the result.
func (s *Supervisor) execute(ctx context.Context) job.Result {
	s.report(job.Preparing, "materializing the code snapshot and inputs")
	var res job.Result
	p, err := s.startPipeline(ctx)
	if err != nil {
		res = job.Result{State: job.Failed, Reason: fmt.Sprintf("preparing: open the log: %v", err)}
		res.Time = time.Now().UTC()
		return res
	}
	w, err := s.prepare(ctx, p)
	switch {
	case err != nil && s.isCanceled():
		res = job.Result{State: s.stopState(s.cancelWhy), Reason: s.cancelWhy}
	case err != nil:
		s.log.Error("prepare", "err", err)
		fmt.Fprintf(p.capt, "hangar: preparing the run failed: %v\n", err)
		res = job.Result{State: job.Failed, Reason: fmt.Sprintf("preparing: %v", err)}
	case s.isCanceled():
		res = job.Result{State: s.stopState(s.cancelWhy), Reason: s.cancelWhy}
	case w.sidecar:
		res = s.serving.runSidecar(ctx, w, p)
	case s.importing():
		res = s.runImport(ctx, w, p)
	default:
		s.report(job.Starting, "starting the command")
		stopCheckpoints := s.checkpoints.start(ctx)
		res = s.parallelResult(s.runCommand(ctx, w, p))
		stopCheckpoints(res)
	}
	s.endBox(ctx, w, p) // the box opens while preparing (environment builds run in it)
	p.close()
	if err := s.outputs.finalize(ctx, w, p, res.State == job.Completed); err != nil && res.State == job.Completed {
		res = job.Result{State: job.Failed, ExitCode: res.ExitCode, Reason: fmt.Sprintf("finalizing: %v", err)}
	}
	if w.env != nil {
		w.env.Release()
	}
	res.Time = time.Now().UTC() // the run ends when its outputs are safe
	return res
}

// pipeline carries the run's output: a capture writing whole lines to std_log.txt, and the shippers
// sending that file and the metrics file to the server as they grow.
type pipeline struct {
	capt          *capture
	logs, metrics *shipper
	stop          context.CancelFunc
	shipping      sync.WaitGroup
}

func (s *Supervisor) startPipeline(ctx context.Context) (*pipeline, error) {
	for _, d := range []string{filepath.Join(s.cfg.Dir, UserLogsDir), filepath.Join(s.cfg.Dir, "hangar")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	shipAs := StdLogFile
	if s.worker() {
		shipAs = fmt.Sprintf("std_log_node_%d.txt", s.spec.NodeRank)
	}
	p := &pipeline{
		logs:    newShipper(filepath.Join(s.cfg.Dir, UserLogsDir, StdLogFile), logSender(s.conn, s.cfg.RunID, shipAs), s.log),
		metrics: newShipper(s.metricsFile(), metricSender(s.conn, s.cfg.RunID, s.spec.Attempt, s.warn), s.log),
	}
	capt, err := newCapture(p.logs.t.path, p.logs.poke)
	if err != nil {
		return nil, err
	}
	p.capt = capt
	shipCtx, stop := context.WithCancel(ctx)
	p.stop = stop
	p.shipping.Go(func() { p.logs.run(shipCtx) })
	if !s.worker() { // node 0's processes log the run's metrics
		p.shipping.Go(func() { p.metrics.run(shipCtx) })
	}
	return p, nil
}

// close stops the background shipping and closes the log; finalize ships what is left.
func (p *pipeline) close() {
	p.stop()
	p.shipping.Wait()
	p.capt.close()
}

func (s *Supervisor) metricsFile() string { return filepath.Join(s.cfg.Dir, "hangar", MetricsFile) }

// runCommand starts the user's command in its own process group and waits for it, enforcing
// cancel and limits.timeout.
func (s *Supervisor) runCommand(ctx context.Context, w *workspace, p *pipeline) job.Result {
	switch {
	case w.container != nil && (len(w.plan.Processes) > 1 || w.plan.MPI):
		return job.Result{State: job.Failed, Reason: "distributed runs in a container image are not supported yet"}
	case w.plan.MPI && s.worker():
		return s.ranks.runMPIWorker(ctx, w, p)
	case w.plan.MPI:
		return s.ranks.runMPI(w, p)
	case len(w.plan.Processes) > 1:
		return s.ranks.run(w, p)
	case len(w.plan.Processes) == 1:
		w.vars = withEnv(w.vars, w.plan.Processes[0].Env)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return job.Result{State: job.Failed, Reason: fmt.Sprintf("pipe: %v", err)}
	}
	cmd := w.proc(false, w.vars, w.shell, "-c", w.command)
	if w.container != nil {
		if cmd, err = s.environment.containerCommand(w); err != nil {
			pw.Close()
			pr.Close()
			return job.Result{State: job.Failed, Reason: fmt.Sprintf("container: %v", err)}
		}
	}
	cmd.Stdin = nil
	if cmd, err = s.startPiped(w, cmd, pr, pw); err != nil {
		return job.Result{State: job.Failed, Reason: fmt.Sprintf("start command: %v", err)}
	}
	s.report(job.Running, "")
	if w.servePort != 0 { // a replica: tell the server where it answers once it does
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		go s.serving.announce(sctx, w.servePort)
	}
	captured := make(chan struct{})
	go func() { p.capt.copyFrom(pr); close(captured) }()
	res := s.wait(w, cmd, w.container)
	s.drainOutput(w, cmd.Process.Pid, pr, captured)
	return res
}

// wait waits for the command, stopping its process group (or its container) on cancel or timeout.
func (s *Supervisor) wait(w *workspace, cmd *exec.Cmd, ctr *container) job.Result {
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
		err = s.stop(w, cmd.Process.Pid, ctr, done)
	case <-timeout:
		stopReason = fmt.Sprintf("canceled: the job exceeded limits.timeout (%ds)", s.spec.Spec.Limits.TimeoutSeconds)
		s.log.Info("timeout", "seconds", s.spec.Spec.Limits.TimeoutSeconds)
		err = s.stop(w, cmd.Process.Pid, ctr, done)
	}
	code := exitCode(cmd, err)
	if stopReason == "" && code == 128+int(syscall.SIGTERM) {
		// Killed by SIGTERM from outside (Slurm's time limit signals the whole job, a cancel
		// signals the supervisor too): the reason arrives with the supervisor's own signal.
		select {
		case <-s.canceled:
			stopReason = s.cancelWhy
		case <-time.After(2 * time.Second):
		}
	}
	now := time.Now().UTC()
	if stopReason != "" {
		return job.Result{State: s.stopState(stopReason), ExitCode: &code, Reason: stopReason, Time: now}
	}
	if code != 0 {
		return job.Result{State: job.Failed, ExitCode: &code, Reason: fmt.Sprintf("the command exited with code %d", code), Time: now}
	}
	return job.Result{State: job.Completed, ExitCode: &code, Time: now}
}

// stop ends the command: a container through its runtime, a process group with SIGTERM then
// SIGKILL after the grace period.
func (s *Supervisor) stop(w *workspace, pgid int, ctr *container, done <-chan error) error {
	grace := time.Duration(s.spec.CancelGraceSeconds) * time.Second
	if grace <= 0 {
		grace = 10 * time.Second
	}
	if ctr != nil {
		s.log.Info("stopping the container", "name", ctr.name, "grace", grace)
		go ctr.stop(grace)
		select {
		case err := <-done:
			return err
		case <-time.After(grace + 30*time.Second):
		}
	}
	return s.stopGroup(w, pgid, grace, done)
}

// stopGroup sends SIGTERM to the process group, then SIGKILL after the grace period
// (proc.Escalate), and SIGKILL to what is left of the group once its leader is gone.
func (s *Supervisor) stopGroup(w *workspace, pgid int, grace time.Duration, done <-chan error) error {
	s.log.Info("stopping the command", "signal", "SIGTERM", "grace", grace)
	exited := make(chan struct{})
	var err error
	go func() { err = <-done; close(exited) }()
	proc.Escalate(context.Background(), grace, proc.Target{Done: exited, Signal: func(sig syscall.Signal) {
		if sig == syscall.SIGKILL {
			s.log.Info("grace period over", "signal", "SIGKILL")
		}
		w.signal(pgid, sig)
	}})
	<-exited
	w.signal(pgid, syscall.SIGKILL) // leftovers of the group
	return err
}

// drainOutput waits for the output pipe to close. Background processes of the command may hold it
// open: after a short wait they are killed, and as a last resort the pipe is closed.
func (s *Supervisor) drainOutput(w *workspace, pgid int, pr *os.File, captured <-chan struct{}) {
	select {
	case <-captured:
		return
	case <-time.After(2 * time.Second):
	}
	s.log.Info("processes left behind by the command hold its output; killing them")
	w.signal(pgid, syscall.SIGKILL)
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
