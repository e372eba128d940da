package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// Settings tune the controller.
type Settings struct {
	// Heartbeat is how often supervisors report; a run silent for StaleAfter is checked with its backend.
	Heartbeat  time.Duration
	StaleAfter time.Duration
	// NotRespondingAfter marks a run whose supervisor is alive but silent this long NotResponding.
	NotRespondingAfter time.Duration
	// LostAfter fails a run whose node has been unreachable (its backend cannot tell its state)
	// this long.
	LostAfter time.Duration
	// CancelGrace is the time between SIGTERM and SIGKILL of a canceled run's processes.
	CancelGrace time.Duration
	// Tick is the reconcile period.
	Tick time.Duration
	// TokenTTL is how long a run token is valid; supervisors get a fresh one with every heartbeat
	// reply. TokenGrace is how long a run's token still works after the run ended (a late retry
	// of its final report). See Admit.
	TokenTTL, TokenGrace time.Duration
	// NodeOutputsWait bounds how long a multi-node run's artifacts wait for the other nodes'
	// logs and outputs once node 0 delivered its own (see RegisterArtifacts).
	NodeOutputsWait time.Duration
}

// Bounds on backend calls, so that one unreachable host cannot stall the loop for everyone.
const (
	submitTimeout = 2 * time.Minute
	statusTimeout = 15 * time.Second
)

// DefaultSettings are used for zero fields.
var DefaultSettings = Settings{
	Heartbeat: 5 * time.Second, StaleAfter: 15 * time.Second, NotRespondingAfter: 60 * time.Second,
	CancelGrace: 10 * time.Second, Tick: time.Second, LostAfter: 15 * time.Minute,
	TokenTTL: 7 * 24 * time.Hour, TokenGrace: 2 * time.Minute, NodeOutputsWait: 10 * time.Minute,
}

// Controller owns the run lifecycle.
type Controller struct {
	Store    *store.Store
	Blobs    *blob.Store
	Backends map[string]backend.Backend // by compute type
	Tokens   Tokens
	// Secrets seals compute secrets (passwords, private keys) at rest.
	Secrets  Sealer
	Settings Settings
	Log      *slog.Logger
	// Now is the clock (injectable for tests).
	Now func() time.Time
	// Changed is called after a run changed (for waiters on logs and status).
	Changed func(runID string)
	// LocalRuntime names the container runtime of this machine ("" when none), for local targets.
	LocalRuntime func() string
	// Clusters runs managed clusters (nil: cluster targets cannot run jobs).
	Clusters *Clusters

	kick    chan struct{}
	started time.Time
	mu      sync.Mutex // serialises submit/cancel decisions per controller
}

// Init fills defaults; call before use.
func (c *Controller) Init() {
	d := DefaultSettings
	s := &c.Settings
	if s.Heartbeat == 0 {
		s.Heartbeat = d.Heartbeat
	}
	if s.StaleAfter == 0 {
		s.StaleAfter = d.StaleAfter
	}
	if s.NotRespondingAfter == 0 {
		s.NotRespondingAfter = d.NotRespondingAfter
	}
	if s.LostAfter == 0 {
		s.LostAfter = d.LostAfter
	}
	if s.CancelGrace == 0 {
		s.CancelGrace = d.CancelGrace
	}
	if s.Tick == 0 {
		s.Tick = d.Tick
	}
	if s.TokenTTL == 0 {
		s.TokenTTL = d.TokenTTL
	}
	if s.TokenGrace == 0 {
		s.TokenGrace = d.TokenGrace
	}
	if s.NodeOutputsWait == 0 {
		s.NodeOutputsWait = d.NodeOutputsWait
	}
	if c.Now == nil {
		c.Now = func() time.Time { return time.Now().UTC() }
	}
	if c.Changed == nil {
		c.Changed = func(string) {}
	}
	c.kick = make(chan struct{}, 1)
	c.started = c.Now()
}

// Kick asks the loop to reconcile soon.
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	t := time.NewTicker(c.Settings.Tick)
	defer t.Stop()
	for {
		if err := c.reconcile(ctx); err != nil && ctx.Err() == nil {
			c.Log.Error("reconcile", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.kick:
		}
	}
}

// reconcile hands queued runs to backends, delivers cancels and checks silent runs.
func (c *Controller) reconcile(ctx context.Context) error {
	runs, err := c.Store.Runs(ctx, store.RunFilter{Active: true})
	if err != nil {
		return err
	}
	if c.Clusters != nil {
		if err := c.reconcileClusters(ctx, runs); err != nil && ctx.Err() == nil {
			c.Log.Error("reconcile clusters", "err", err)
		}
	}
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		r := runs[i]
		var err error
		switch {
		case r.Status == job.CancelRequested && !r.CancelSent:
			err = c.deliverCancel(ctx, r)
		case r.Status == job.Queued && len(r.Handle) == 0 && c.isCluster(ctx, r.Compute):
			// placed by the cluster scheduler
		case r.Status == job.Queued && len(r.Handle) == 0:
			err = c.submit(ctx, r)
		case len(r.Handle) > 0:
			err = c.watch(ctx, r)
		}
		if err != nil && ctx.Err() == nil {
			c.Log.Error("reconcile run", "run", r.ID, "err", err)
		}
	}
	return nil
}

func (c *Controller) backendFor(ctx context.Context, r *job.Run) (backend.Backend, *compute.Target, error) {
	t, err := c.Store.Compute(ctx, r.Compute)
	if err != nil {
		return nil, nil, err
	}
	b, ok := c.Backends[t.Type]
	if !ok {
		return nil, t, errors.New("no backend for compute type " + t.Type)
	}
	return b, t, nil
}

// submit starts a queued run's supervisor.
func (c *Controller) submit(ctx context.Context, r *job.Run) error {
	b, t, err := c.backendFor(ctx, r)
	if err != nil {
		_, terr := c.transition(ctx, r.ID, job.Failed, "submit: "+err.Error(), nil, nil)
		return errors.Join(err, terr)
	}
	if full, why, err := c.targetFull(ctx, t); err != nil || full {
		if err == nil && r.StatusReason != why {
			_, err = c.Store.UpdateRun(ctx, r.ID, func(r *job.Run) ([]job.Event, error) {
				r.StatusReason = why
				return nil, nil
			})
		}
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, submitTimeout)
	defer cancel()
	h, err := b.Submit(sctx, backend.Launch{RunID: r.ID, Token: c.tokenFor(r), Target: *t, Spec: r.Spec})
	if err != nil {
		_, terr := c.transition(ctx, r.ID, job.Failed, "submit to "+t.Name+": "+err.Error(), nil, nil)
		return errors.Join(err, terr)
	}
	canceled := false
	_, err = c.Store.UpdateRun(ctx, r.ID, func(r *job.Run) ([]job.Event, error) {
		r.Handle = h
		r.LastHeartbeat = c.Now()
		canceled = r.Status == job.CancelRequested || r.Status == job.Canceled
		return nil, nil
	})
	if err == nil && canceled {
		err = b.Cancel(ctx, h)
	}
	c.Log.Info("submitted", "run", r.ID, "compute", t.Name)
	return err
}

// deliverCancel tells the backend to stop a run; a run never handed to one is canceled at once.
func (c *Controller) deliverCancel(ctx context.Context, r *job.Run) error {
	if len(r.Handle) == 0 {
		_, err := c.transition(ctx, r.ID, job.Canceled, "canceled before it started", nil, nil)
		return err
	}
	b, _, err := c.backendFor(ctx, r)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	if err := b.Cancel(cctx, r.Handle); err != nil {
		return err
	}
	_, err = c.Store.UpdateRun(ctx, r.ID, func(r *job.Run) ([]job.Event, error) {
		r.CancelSent = true
		return nil, nil
	})
	return err
}

// watch asks the backend about a run whose supervisor has been silent too long.
func (c *Controller) watch(ctx context.Context, r *job.Run) error {
	if r.Status == job.Queued {
		waiting, err := c.pending(ctx, r)
		if waiting {
			return err
		}
		if err != nil {
			c.Log.Warn("pending check", "run", r.ID, "err", err)
		}
	}
	last := r.LastHeartbeat
	if last.Before(c.started) {
		last = c.started // the server itself was away: give supervisors time to reconnect
	}
	silent := c.Now().Sub(last)
	if silent < c.Settings.StaleAfter {
		return nil
	}
	b, _, err := c.backendFor(ctx, r)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	st, err := b.Status(sctx, r.Handle)
	if err != nil {
		return c.unreachable(ctx, r, silent, err)
	}
	switch {
	case st.Final != nil:
		_, err = c.transition(ctx, r.ID, st.Final.State, st.Final.Reason, st.Final.ExitCode, nil)
	case !st.Alive:
		_, err = c.transition(ctx, r.ID, job.Failed, "lost: "+st.Reason, nil, nil)
	case silent >= c.Settings.NotRespondingAfter && r.Status != job.NotResponding:
		_, err = c.transition(ctx, r.ID, job.NotResponding, "no heartbeat for "+silent.Round(time.Second).String(), nil, nil)
	}
	return err
}

// pending asks a backend whose engine keeps its own queue (backend.Pender) whether a submitted,
// Queued run still waits there. While it does, the engine's reason is the run's status reason and
// the silence clock is held (no supervisor runs yet to heartbeat).
func (c *Controller) pending(ctx context.Context, r *job.Run) (bool, error) {
	b, _, err := c.backendFor(ctx, r)
	if err != nil {
		return false, err
	}
	p, ok := b.(backend.Pender)
	if !ok {
		return false, nil
	}
	pctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	why, waiting, err := p.Pending(pctx, r.Handle)
	if err != nil || !waiting {
		return false, err
	}
	if why == r.StatusReason && c.Now().Sub(r.LastHeartbeat) < c.Settings.StaleAfter/2 {
		return true, nil
	}
	_, err = c.Store.UpdateRun(ctx, r.ID, func(r *job.Run) ([]job.Event, error) {
		if r.Status == job.Queued {
			r.StatusReason, r.LastHeartbeat = why, c.Now()
		}
		return nil, nil
	})
	c.Changed(r.ID)
	return true, err
}

// targetFull reports whether a local target is at its max_concurrent_runs, with the reason shown on
// the runs that wait.
func (c *Controller) targetFull(ctx context.Context, t *compute.Target) (bool, string, error) {
	st, err := compute.Load(*t)
	if err != nil || st.Spec.Local == nil || st.Spec.Local.MaxConcurrentRuns <= 0 {
		return false, "", err
	}
	active, err := c.Store.Runs(ctx, store.RunFilter{Active: true, Compute: t.Name})
	if err != nil {
		return false, "", err
	}
	running := 0
	for _, r := range active {
		if len(r.Handle) > 0 {
			running++
		}
	}
	max := st.Spec.Local.MaxConcurrentRuns
	return running >= max, fmt.Sprintf("waiting: %d/%d runs running on %s (max_concurrent_runs)", running, max, t.Name), nil
}

// unreachable handles a run whose backend cannot tell its state (its host does not answer): it is
// NotResponding after NotRespondingAfter, and Failed after LostAfter.
func (c *Controller) unreachable(ctx context.Context, r *job.Run, silent time.Duration, cause error) error {
	c.Log.Warn("run's node unreachable", "run", r.ID, "silent", silent.Round(time.Second), "err", cause)
	if silent >= c.Settings.NotRespondingAfter && r.Status != job.NotResponding {
		if _, err := c.transition(ctx, r.ID, job.NotResponding,
			fmt.Sprintf("no heartbeat for %s and its node does not answer: %v", silent.Round(time.Second), cause), nil, nil); err != nil {
			return err
		}
	}
	if silent >= c.Settings.LostAfter {
		_, err := c.transition(ctx, r.ID, job.Failed,
			fmt.Sprintf("NotResponding: its node was unreachable for %s (%v)", silent.Round(time.Second), cause), nil, nil)
		return err
	}
	return nil
}

// isCluster reports whether a target is a managed cluster (its runs are scheduled, not submitted).
func (c *Controller) isCluster(ctx context.Context, name string) bool {
	t, err := c.Store.Compute(ctx, name)
	return err == nil && t.Type == compute.TypeCluster
}
