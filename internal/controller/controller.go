package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/config"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tick"
	"github.com/hangar-ml/hangar/internal/tokens"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// Settings tune the controller; the CLI sets them from `hangar server` flags (internal/config).
type Settings = config.Controller

// DefaultSettings are used for zero fields.
var DefaultSettings = config.DefaultController

// Bounds on backend calls, so that one unreachable host cannot stall the loop for everyone.
const (
	submitTimeout = 2 * time.Minute
	statusTimeout = 15 * time.Second
)

// Config is what the run core is made of (New).
type Config struct {
	Store    *store.Store
	Blobs    *blob.Store
	Backends map[string]backend.Backend // by compute type
	Creators map[string]Creator         // by job type (create.go)
	Tokens   tokens.Run
	// Secrets seals compute and job secrets at rest (the workspace's Sealer).
	Secrets  Sealer
	Settings Settings
	Log      *slog.Logger
	// Now is the clock (injectable for tests); nil means the wall clock (UTC).
	Now func() time.Time
	// LocalRuntime names the container runtime of this machine ("" when none), for local targets.
	LocalRuntime func() string
}

// Controller owns the run lifecycle.
type Controller struct {
	Config
	// Workspace resolves jobs against the workspace and holds its nouns' CRUD.
	Workspace *workspace.Workspace
	// GC, Checkpoints, Tracking, Parents and Imports hold the concerns beside the run core
	// (nouns.go).
	GC          *GC
	Checkpoints *Checkpoints
	Tracking    *Tracking
	Parents     *Parents
	Imports     *Imports

	// changes are the subscribers to run changes (OnChange; Changed notifies them).
	changes changes
	kick    tick.Kick
	started time.Time
	mu      sync.Mutex // serialises submit/cancel decisions per controller

	// news is what the loop was told since its last pass; view is its picture of the active
	// runs (loop.go); calls carries out backend calls per target (calls.go); wake is when each
	// Placer (by compute type) asked to be called again.
	news  news
	view  view
	calls *calls
	wake  map[string]time.Time
	// exits are when Queued runs left their engine's queue; notifying are the compute types
	// whose backend.Notifier was given the loop's nudge.
	exits     queueExits
	notifying map[string]bool
	// rotating serialises key rotations (jobsecrets.go); gc, the blob collections (gc.go).
	rotating sync.Mutex
	gc       sync.Mutex
}

// New is the run core over cfg (its zero settings defaulted), with its workspace and the
// nouns beside it (nouns.go) made over the same dependencies.
func New(cfg Config) *Controller {
	c := &Controller{Config: cfg}
	c.Settings = c.Settings.WithDefaults()
	if c.Now == nil {
		c.Now = func() time.Time { return time.Now().UTC() }
	}
	c.kick = tick.NewKick()
	c.Workspace = c.newWorkspace()
	c.GC, c.Checkpoints, c.Tracking, c.Parents = &GC{c}, &Checkpoints{c}, &Tracking{c}, &Parents{c}
	c.Imports = &Imports{c}
	c.started = c.Now()
	c.view = view{runs: map[string]runView{}, placed: map[string]*job.Run{}, owed: map[string]runView{}}
	c.calls = newCalls(c.Now, c.Kick)
	c.wake = map[string]time.Time{}
	c.notifying = map[string]bool{}
	c.OnChange(c.news.run)
	return c
}

// Kick asks the loop to reconcile soon; Placers are called in that pass (something they decide
// from may have changed: a node joined or left).
func (c *Controller) Kick() {
	c.news.kick()
	c.kick.Kick()
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	tick.Loop(ctx, c.Settings.Tick, c.kick, func(ctx context.Context) {
		if err := c.reconcile(ctx); err != nil && ctx.Err() == nil {
			c.Log.Error("reconcile", "err", err)
		}
	})
}

func (c *Controller) backendFor(ctx context.Context, r *job.Run) (backend.Backend, *compute.Target, error) {
	t, err := c.Store.Cluster.Compute(ctx, r.Compute)
	if err != nil {
		return nil, nil, err
	}
	b, ok := c.Backends[t.Type]
	if !ok {
		return nil, t, errors.New("no backend for compute type " + t.Type)
	}
	return b, t, nil
}

// submit hands a queued run to its backend, on the target's calls (never in the loop).
func (c *Controller) submit(ctx context.Context, r *job.Run) error {
	b, t, err := c.backendFor(ctx, r)
	if err != nil {
		_, terr := c.transition(ctx, r.ID, job.Failed, "submit: "+err.Error(), nil, nil)
		return errors.Join(err, terr)
	}
	c.calls.start(t.Name, &call{run: r.ID, submit: true, fn: func() {
		if err := c.submitCall(ctx, b, t, r); err != nil && ctx.Err() == nil {
			c.Log.Error("submit", "run", r.ID, "compute", t.Name, "err", err)
		}
	}})
	return nil
}

// submitCall submits a run and applies the outcome: the handle; a wait while the target does
// not answer (failed after Settings.UnreachableLimit); a failure when it refused.
func (c *Controller) submitCall(ctx context.Context, b backend.Backend, t *compute.Target, r *job.Run) error {
	h, err := c.launch(ctx, b, t, r)
	health := c.calls.record(t.Name, err)
	switch {
	case err == nil:
		return c.submitted(ctx, b, t, r, h)
	case ctx.Err() != nil:
		return nil
	case transient(err):
		c.Log.Warn("target unreachable", "compute", t.Name, "run", r.ID, "err", err)
		return c.waitUnreachable(ctx, r, t, health)
	}
	_, terr := c.transition(ctx, r.ID, job.Failed, "submit to "+t.Name+": "+err.Error(), nil, nil)
	return errors.Join(err, terr)
}

// waitUnreachable shows why a queued run waits on a target that does not answer, and fails it
// once it has waited Settings.UnreachableLimit.
func (c *Controller) waitUnreachable(ctx context.Context, r *job.Run, t *compute.Target, h targetHealth) error {
	why := h.reason(*t)
	if h.expired(r.CreatedAt, c.Now(), c.Settings.UnreachableLimit) {
		_, err := c.transition(ctx, r.ID, job.Failed,
			fmt.Sprintf("%s (waited %s, the limit: hangar server --unreachable-limit)", why, c.Settings.UnreachableLimit), nil, nil)
		return err
	}
	if why != "" {
		c.setWaiting(ctx, r.ID, why)
	}
	return nil
}

// launch hands a run to its backend (with its placement, when a Placer made one).
func (c *Controller) launch(ctx context.Context, b backend.Backend, t *compute.Target, r *job.Run) (backend.Handle, error) {
	sctx, cancel := context.WithTimeout(ctx, submitTimeout)
	defer cancel()
	return b.Submit(sctx, backend.Launch{RunID: r.ID, Token: c.tokenFor(r), Target: *t, Spec: r.Spec,
		Attempt: max(r.Attempt, 1), Placement: r.Placement})
}

// submitted records a submitted run's handle, and stops the run at once if it was canceled
// meanwhile.
func (c *Controller) submitted(ctx context.Context, b backend.Backend, t *compute.Target, r *job.Run, h backend.Handle) error {
	canceled, placed := false, ""
	if r.Placement != nil {
		placed = "assigned to nodes " + strings.Join(r.Placement.Nodes, ", ")
	}
	_, err := c.Store.RunWrites.UpdateRun(ctx, r.ID, func(r *job.Run) ([]job.Event, error) {
		r.Handle = h
		r.LastHeartbeat = c.Now()
		if placed != "" && r.Status == job.Queued {
			r.StatusReason = placed
		}
		canceled = r.Status == job.CancelRequested || r.Status == job.Canceled
		return nil, nil
	})
	if err == nil && canceled {
		err = b.Cancel(ctx, h)
	}
	c.Changed(r.ID)
	c.Log.Info("submitted", "run", r.ID, "compute", t.Name)
	return err
}

// deliverCancel tells the backend to stop a run (on the target's calls); a run never handed to
// one is canceled at once.
func (c *Controller) deliverCancel(ctx context.Context, r *job.Run) error {
	if len(r.Handle) == 0 {
		_, err := c.transition(ctx, r.ID, job.Canceled, "canceled before it started", nil, nil)
		return err
	}
	b, t, err := c.backendFor(ctx, r)
	if err != nil {
		return err
	}
	c.calls.start(t.Name, &call{run: r.ID, fn: func() {
		cctx, cancel := context.WithTimeout(ctx, statusTimeout)
		err := b.Cancel(cctx, r.Handle)
		cancel()
		c.calls.record(t.Name, err)
		if err == nil {
			_, err = c.Store.RunWrites.UpdateRun(ctx, r.ID, func(r *job.Run) ([]job.Event, error) {
				r.CancelSent = true
				return nil, nil
			})
			c.Changed(r.ID)
		}
		if err != nil && ctx.Err() == nil {
			c.Log.Warn("deliver cancel", "run", r.ID, "err", err)
		}
	}})
	return nil
}

// watch asks the backend about a run whose supervisor has been silent too long (or that waits
// in its engine's queue, or whose engine said it changed: nudged), on the target's calls. While
// the target is known not to answer, no call is made: the silence is judged with the target's
// last error.
func (c *Controller) watch(ctx context.Context, r *job.Run, nudged bool) error {
	b, t, err := c.backendFor(ctx, r)
	if err != nil {
		return err
	}
	_, pender := b.(backend.Pender)
	if (r.Status != job.Queued || !pender) && !nudged {
		silent := c.silence(r)
		if silent < c.Settings.StaleAfter {
			return nil
		}
	}
	started := c.calls.start(t.Name, &call{run: r.ID, fn: func() {
		if err := c.watchCall(ctx, b, t, r, nudged); err != nil && ctx.Err() == nil {
			c.Log.Error("watch", "run", r.ID, "err", err)
		}
	}})
	if h := c.calls.health(t.Name); !started && h.Down() && !c.calls.isBusy(r.ID) && (r.Status != job.Queued || !pender) {
		return c.unreachable(ctx, r, c.silence(r), errors.New(h.Err))
	}
	return nil
}

// silence is how long a run's supervisor has not been heard from, counting from the
// controller's start at the earliest (the server itself was away: supervisors get time to
// reconnect), and from when its engine let it out of its queue (its supervisor is starting).
func (c *Controller) silence(r *job.Run) time.Duration {
	last := r.LastHeartbeat
	if last.Before(c.started) {
		last = c.started
	}
	if left := c.exits.at(r.ID); r.Status == job.Queued && left.After(last) {
		last = left
	}
	return c.Now().Sub(last)
}

// watchCall asks the run's engine queue (Pender), then, when the run is silent (or canceled and
// nudged: its engine says its objects changed), its status.
func (c *Controller) watchCall(ctx context.Context, b backend.Backend, t *compute.Target, r *job.Run, nudged bool) error {
	if r.Status == job.Queued {
		waiting, err := c.pending(ctx, b, t, r)
		if waiting {
			return err
		}
		if err != nil {
			c.Log.Warn("pending check", "run", r.ID, "err", err)
		}
	}
	silent := c.silence(r)
	if silent < c.Settings.StaleAfter && !(nudged && r.Status == job.CancelRequested) {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	st, err := b.Status(sctx, r.Handle)
	c.calls.record(t.Name, err)
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
// the silence clock is held (no supervisor runs yet to heartbeat); once it does not, its silence
// counts from then (exits).
func (c *Controller) pending(ctx context.Context, b backend.Backend, t *compute.Target, r *job.Run) (bool, error) {
	p, ok := b.(backend.Pender)
	if !ok {
		return false, nil
	}
	pctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	why, waiting, err := p.Pending(pctx, r.Handle)
	c.calls.record(t.Name, err)
	if err != nil {
		return false, err
	}
	if !waiting {
		c.exits.mark(r.ID, c.Now())
		return false, nil
	}
	if why == r.StatusReason {
		return true, nil
	}
	_, err = c.Store.RunWrites.UpdateRun(ctx, r.ID, func(r *job.Run) ([]job.Event, error) {
		if r.Status == job.Queued {
			r.StatusReason = why
		}
		return nil, nil
	})
	c.Changed(r.ID)
	return true, err
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
