package agent

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// beat sends one heartbeat and acts on the reply. again asks for the next heartbeat at once (to
// acknowledge work, or report a run that ended, quickly, or because the server long-polls);
// done means the agent should exit. The heartbeat is a long poll: the server holds it up to the
// heartbeat interval until there is work for the node, so work arrives as it is queued.
func (a *Agent) beat(ctx context.Context) (again, done bool) {
	report := a.runs.report(ctx)
	if a.gone {
		return false, a.idle(report)
	}
	hb := api.AgentHeartbeat{Runs: report, Acks: a.acks, Draining: a.draining, Notice: a.noticed}
	if a.register {
		info := a.info
		hb.Register = &info
	}
	hb.PollMillis = a.cfg.Heartbeat.Milliseconds()
	hb.Activity = a.sshActivity(a.jupyterActivity(a.activity.report(a.cfg.Now())))
	rep, ended, err := a.send(ctx, hb, report)
	if err != nil && ended {
		return true, false // cut short to report a run that ended
	}
	if err != nil {
		return false, a.failed(ctx, err, report)
	}
	if a.offline {
		a.log.Info("server is back; re-registered", "node", a.id.NodeID, "runs", len(report))
	}
	a.offline, a.register, a.acks = false, false, nil
	if rep.Servers != "" && a.api.SetServers(rep.Servers) {
		a.servers.Store(rep.Servers)
	}
	a.jupyter.want(rep.Jupyter)
	a.ssh.want(rep.SSHAuthorizedKeys)
	if rep.Release && !a.draining {
		a.log.Info("released: taking no more runs, exiting once idle", "reason", rep.Reason, "running", alive(report))
		a.draining = true
	}
	started := a.work(ctx, rep)
	if a.draining && started == 0 && len(a.acks) == 0 && a.idle(report) {
		a.leave(report)
		return false, true
	}
	return len(a.acks) > 0 || ended || rep.Polled, false
}

// send sends a heartbeat. While the server holds it, the agent watches its runs and cuts the
// wait short when one ends (ended), to report that at once: the server places more work there.
func (a *Agent) send(ctx context.Context, hb api.AgentHeartbeat, report []api.AgentRun) (*api.HeartbeatReply, bool, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout+time.Duration(hb.PollMillis)*time.Millisecond)
	defer cancel()
	var ended atomic.Bool
	stop := make(chan struct{})
	watching := make(chan struct{})
	if hb.PollMillis > 0 && alive(report) > 0 {
		handles := a.runs.aliveHandles(report)
		go func() {
			defer close(watching)
			if a.runs.watch(cctx, stop, handles) {
				ended.Store(true)
				cancel()
			}
		}()
	} else {
		close(watching)
	}
	rep, err := a.api.Agents.Heartbeat(cctx, a.id.NodeID, hb)
	close(stop)
	<-watching
	return rep, ended.Load() && ctx.Err() == nil, err
}

// work starts assigned runs and cancels runs, and queues the acknowledgements.
func (a *Agent) work(ctx context.Context, rep *api.HeartbeatReply) (started int) {
	for _, w := range rep.Assignments {
		if a.runs.stopping(w.RunID, tokenAttempt(w.Token)) {
			continue // not acknowledged: it comes again once the earlier attempt has stopped
		}
		if a.runs.start(ctx, w.RunID, w.Token) {
			started++ // the supervisors' launcher logs it
		} else if e := a.runs.known[w.RunID]; e.failed != nil && e.handle == nil {
			a.log.Error("run not started", "run", w.RunID, "reason", e.failed.Reason)
		}
		a.acks = append(a.acks, w.ID)
	}
	a.runs.forget(rep.Forget)
	a.runs.sweepDirs(ctx)
	for _, c := range rep.Cancels {
		if err := a.runs.cancel(ctx, c.RunID); err != nil {
			a.log.Warn("cancel run", "run", c.RunID, "err", err)
			continue // not acknowledged: it comes again
		}
		a.log.Info("canceled run", "run", c.RunID)
		a.acks = append(a.acks, c.ID)
	}
	return started
}

// failed handles a heartbeat that did not go through: the server forgot the node (drain and
// exit), refused the token (say so, keep trying), or is unreachable (runs go on; re-register
// when it is back).
func (a *Agent) failed(ctx context.Context, err error, report []api.AgentRun) (done bool) {
	switch status(err) {
	case http.StatusGone, http.StatusNotFound:
		a.log.Warn("the server no longer knows this node: exiting once idle", "node", a.id.NodeID, "err", err, "running", alive(report))
		a.gone, a.draining = true, true
		return a.idle(report)
	case http.StatusUnauthorized, http.StatusForbidden:
		if a.cfg.JoinToken != "" {
			if jerr := a.join(ctx); jerr == nil {
				a.log.Info("the server refused the agent token; joined again", "node", a.id.NodeID)
				return false
			}
		}
		a.log.Error("the server refused the agent token", "node", a.id.NodeID, "err", err)
		a.register = true
		return false
	}
	if !a.offline {
		a.log.Warn("server unreachable: runs keep going, will re-register", "server", a.cfg.ServerURL, "err", err, "running", alive(report))
	}
	a.offline, a.register = true, true
	return false
}

func (a *Agent) idle(report []api.AgentRun) bool { return alive(report) == 0 }

// leave sends the last heartbeat (best effort): the node is releasing or unusable from now on.
func (a *Agent) leave(report []api.AgentRun) {
	if a.gone || a.api == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hb := api.AgentHeartbeat{Runs: report, Acks: a.acks, Draining: true, Leaving: true}
	if _, err := a.api.Agents.Heartbeat(ctx, a.id.NodeID, hb); err != nil {
		a.log.Warn("last heartbeat", "err", err)
	}
	a.log.Info("agent exiting", "node", a.id.NodeID)
}

// stop is the agent being stopped (SIGTERM): its runs keep going unless KillRunsOnExit, in
// which case each supervisor is canceled (it still collects outputs and logs) and given
// ExitGrace to finish.
func (a *Agent) stop() error {
	ctx := context.Background()
	report := a.runs.report(ctx)
	if a.cfg.KillRunsOnExit && !a.idle(report) {
		a.log.Info("stopping: canceling runs", "running", alive(report), "grace", a.cfg.ExitGrace)
		for _, r := range report {
			if r.Alive {
				if err := a.runs.cancel(ctx, r.RunID); err != nil {
					a.log.Warn("cancel run", "run", r.RunID, "err", err)
				}
			}
		}
		deadline := time.Now().Add(a.cfg.ExitGrace)
		for !a.idle(report) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			report = a.runs.report(ctx)
		}
	} else if !a.idle(report) {
		a.log.Info("stopping: runs keep going and report to the server themselves", "running", alive(report))
	}
	a.leave(report)
	return nil
}
