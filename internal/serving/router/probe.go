package router

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
)

// Probe defaults, as in Azure's schema.
const (
	defaultProbeDelay     = 10 * time.Second
	defaultProbePeriod    = 10 * time.Second
	defaultProbeTimeout   = 2 * time.Second
	defaultProbeFailures  = 30
	defaultProbeSuccesses = 1
)

// probeState is one replica's probe history, guarded by its deployment's mu.
type probeState struct {
	nextReady, nextLive time.Time
	readyFails, readyOK int
	liveFails           int
	busy                bool // a probe round of this replica is under way
}

// probeSpec is a Probe with its defaults filled in.
type probeSpec struct {
	delay, period, timeout time.Duration
	failures, successes    int
	path                   string
}

func specOf(p serving.Probe) probeSpec {
	sec := func(n int, def time.Duration) time.Duration {
		if n <= 0 {
			return def
		}
		return time.Duration(n) * time.Second
	}
	s := probeSpec{delay: sec(p.InitialDelay, defaultProbeDelay), period: sec(p.Period, defaultProbePeriod),
		timeout: sec(p.Timeout, defaultProbeTimeout), failures: orDefault(p.FailureThreshold, defaultProbeFailures),
		successes: orDefault(p.SuccessThreshold, defaultProbeSuccesses), path: p.Path}
	if s.path == "" {
		s.path = "/"
	}
	return s
}

// RunProber probes every replica's readiness and liveness on their schedules (initial delay,
// then every period) until ctx ends.
func (r *Router) RunProber(ctx context.Context) {
	t := time.NewTicker(r.cfg.ProbeTick)
	defer t.Stop()
	for {
		r.probeRound(ctx, false)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ProbeOnce probes every replica now, whatever its schedule, and returns when all answered or
// timed out (for tests and for a replica the controller just saw start).
func (r *Router) ProbeOnce(ctx context.Context) { r.probeRound(ctx, true) }

type probeJob struct {
	d           *depState
	rs          *replicaState
	ready, live *probeSpec
}

func (r *Router) probeRound(ctx context.Context, all bool) {
	now := r.cfg.Now()
	var jobs []probeJob
	for _, d := range r.allDeps() {
		d.mu.Lock()
		rsp, lsp := specOf(d.cfg.Readiness), specOf(d.cfg.Liveness)
		for _, rs := range d.replicas {
			if rs.addr == "" || rs.probe.busy {
				continue
			}
			j := probeJob{d: d, rs: rs}
			if all || due(now, rs.firstSeen, rsp, rs.probe.nextReady) {
				j.ready, rs.probe.nextReady = &rsp, now.Add(rsp.period)
			}
			if all || due(now, rs.firstSeen, lsp, rs.probe.nextLive) {
				j.live, rs.probe.nextLive = &lsp, now.Add(lsp.period)
			}
			if j.ready != nil || j.live != nil {
				rs.probe.busy = true
				jobs = append(jobs, j)
			}
		}
		d.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { r.probeReplica(ctx, j) })
	}
	if all {
		wg.Wait()
	}
}

func due(now, first time.Time, s probeSpec, next time.Time) bool {
	return !now.Before(first.Add(s.delay)) && !now.Before(next)
}

func (r *Router) probeReplica(ctx context.Context, j probeJob) {
	var readyErr, liveErr error
	if j.ready != nil {
		readyErr = r.get(ctx, j.rs, *j.ready)
	}
	if j.live != nil {
		liveErr = r.get(ctx, j.rs, *j.live)
	}
	if errors.Is(readyErr, errDraining) || errors.Is(liveErr, errDraining) {
		r.takeOut(j.d, j.rs, "it is draining (its supervisor is gone)")
	}
	d, rs := j.d, j.rs
	d.mu.Lock()
	rs.probe.busy = false
	if j.ready != nil {
		r.readiness(d, rs, *j.ready, readyErr)
	}
	var unhealthy string
	if j.live != nil {
		if liveErr == nil {
			rs.probe.liveFails = 0
		} else if rs.probe.liveFails++; rs.probe.liveFails >= j.live.failures {
			rs.probe.liveFails = 0
			unhealthy = fmt.Sprintf("liveness probe failed %d times in a row: %v", j.live.failures, liveErr)
		}
	}
	d.mu.Unlock()
	if unhealthy != "" {
		r.log.Warn("replica unhealthy", "endpoint", d.endpoint, "deployment", d.name, "replica", rs.id, "reason", unhealthy)
		r.cfg.Unhealthy(rs.id, unhealthy)
	}
}

// readiness counts one readiness result: FailureThreshold failures in a row take the replica
// out of the rotation, SuccessThreshold passes in a row bring it back.
func (r *Router) readiness(d *depState, rs *replicaState, s probeSpec, err error) {
	if err == nil {
		rs.probe.readyFails = 0
		rs.probe.readyOK++
		if rs.probedOut && rs.probe.readyOK >= s.successes {
			rs.probedOut = false
			r.log.Info("replica back in rotation", "endpoint", d.endpoint, "deployment", d.name, "replica", rs.id)
			d.broadcastLocked()
		}
		return
	}
	rs.probe.readyOK = 0
	rs.probe.readyFails++
	if !rs.probedOut && rs.probe.readyFails >= s.failures {
		rs.probedOut = true
		r.log.Warn("replica out of rotation", "endpoint", d.endpoint, "deployment", d.name, "replica", rs.id, "err", err)
	}
}

// get is one probe: a GET answered with 2xx or 3xx within the probe's timeout.
func (r *Router) get(ctx context.Context, rs *replicaState, s probeSpec) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+rs.addr+s.path, nil)
	if err != nil {
		return err
	}
	rs.sign(req.Header)
	resp, err := r.transport.RoundTrip(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if draining(resp.Header) {
		return fmt.Errorf("GET %s: %s: %w", s.path, resp.Status, errDraining)
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("GET %s: %s", s.path, resp.Status)
	}
	return nil
}

// errDraining is a probe's answer from a replica that said it is going away.
var errDraining = errors.New("the replica is draining")
