package controller

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// passTarget is a target as one pass sees it.
type passTarget struct {
	target *compute.Target
	pass   targetPass
}

// reconcile is one pass: it reads what changed (everything on the first pass and every
// Settings.Resync), calls the Placers that are due, and acts on the runs its pure pass picks. Backend
// calls run on their target's calls: a pass never waits for a target.
func (c *Controller) reconcile(ctx context.Context) error {
	now := c.Now()
	targets, err := c.passTargets(ctx)
	if err != nil {
		return err
	}
	changed, beats, kicked := c.news.take()
	nudged := c.news.takeNudged()
	full := c.view.resyncAt.IsZero() || !now.Before(c.view.resyncAt)
	loaded, err := c.refresh(ctx, now, targets, changed, full)
	if err != nil {
		return err
	}
	if full {
		c.view.resyncAt = now.Add(c.Settings.Resync)
	}
	for id, at := range beats {
		c.view.heard(id, at)
	}
	c.placeDue(ctx, now, targets, changed, kicked || full)
	tv, busy := c.calls.snapshot(now)
	in := passInput{Now: now, StaleAfter: c.Settings.StaleAfter, Limit: c.Settings.UnreachableLimit,
		Runs: c.view.runs, Owed: c.view.owed, Targets: map[string]targetPass{}, Busy: busy, Nudged: nudged, Full: full,
		Left: c.exits.snapshot(c.view.runs)}
	for name, pt := range targets {
		p := pt.pass
		p.Calls = tv[name]
		p.Unreachable = p.Calls.health.reason(*pt.target)
		in.Targets[name] = p
	}
	for id := range nudged {
		if busy[id] { // the call under way may have read the engine before the change
			c.news.nudge(id)
		}
	}
	c.act(ctx, pass(in), loaded, targets, nudged)
	return nil
}

// passTargets reads the targets and what the pass needs of each.
func (c *Controller) passTargets(ctx context.Context) (map[string]passTarget, error) {
	ts, err := c.Store.Cluster.Computes(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]passTarget, len(ts))
	for i := range ts {
		t := &ts[i]
		b, ok := c.Backends[t.Type]
		if !ok {
			continue // its runs are failed by submit, as for a deleted target
		}
		_, placer := b.(backend.Placer)
		_, pender := b.(backend.Pender)
		n, notifies := b.(backend.Notifier)
		if notifies && !c.notifying[t.Type] {
			n.Notify(c.news.nudge)
			c.notifying[t.Type] = true
		}
		p := targetPass{Name: t.Name, Placer: placer, Pender: pender, Notifies: notifies}
		if st, err := compute.Load(*t); err == nil && st.Spec.Local != nil {
			p.Max = st.Spec.Local.MaxConcurrentRuns
		}
		out[t.Name] = passTarget{target: t, pass: p}
	}
	return out, nil
}

// refresh brings the view up to date: every active run (and every ended run owed a cancel) on a
// full pass, else the runs that changed. It returns the runs it read.
func (c *Controller) refresh(ctx context.Context, now time.Time, targets map[string]passTarget, changed map[string]bool, full bool) (map[string]*job.Run, error) {
	loaded := map[string]*job.Run{}
	placer := func(r *job.Run) bool { return targets[r.Compute].pass.Placer }
	if full {
		runs, err := c.Store.Runs.List(ctx, store.RunFilter{Active: true})
		if err != nil {
			return nil, err
		}
		owed, err := c.Store.Runs.CancelsOwed(ctx, now.Add(-owedCancelWindow))
		if err != nil {
			return nil, err
		}
		c.view.runs, c.view.placed = make(map[string]runView, len(runs)), map[string]*job.Run{}
		c.view.owed = make(map[string]runView, len(owed))
		for _, r := range append(runs, owed...) {
			c.view.put(r, placer(r))
			loaded[r.ID] = r
		}
		return loaded, nil
	}
	for _, id := range slices.Sorted(maps.Keys(changed)) {
		r, err := c.Store.Runs.Run(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			c.view.drop(id)
			continue
		case err != nil:
			c.news.run(id) // read it next pass
			return loaded, err
		}
		c.view.put(r, placer(r))
		loaded[r.ID] = r
	}
	return loaded, nil
}

// placeDue calls each Placer that is due: something changed for its targets (a run of theirs,
// a Kick, a full pass), or the time it asked to be called again came (Plan.Wake; none: every
// pass).
func (c *Controller) placeDue(ctx context.Context, now time.Time, targets map[string]passTarget, changed map[string]bool, all bool) {
	for _, typ := range slices.Sorted(maps.Keys(c.Backends)) {
		p, ok := c.Backends[typ].(backend.Placer)
		if !ok {
			continue
		}
		mine := map[string]bool{}
		for name, pt := range targets {
			if pt.target.Type == typ {
				mine[name] = true
			}
		}
		due := all || !now.Before(c.wake[typ])
		for id := range changed {
			if rv, ok := c.view.runs[id]; ok && mine[rv.Compute] {
				due = true
			}
		}
		if due {
			c.place(ctx, now, typ, p, targets, mine)
		}
	}
}

// act reads each picked run again (unless this pass read it) and does what the pass picked it
// for, if the run still needs it.
func (c *Controller) act(ctx context.Context, lk looks, loaded map[string]*job.Run, targets map[string]passTarget, nudged map[string]bool) {
	do := func(ids []string, fn func(*job.Run) error) {
		for _, id := range ids {
			r := loaded[id]
			if r == nil {
				var err error
				if r, err = c.Store.Runs.Run(ctx, id); errors.Is(err, store.ErrNotFound) {
					c.view.drop(id)
					continue
				} else if err != nil {
					c.Log.Error("read run", "run", id, "err", err)
					continue
				}
				c.view.put(r, targets[r.Compute].pass.Placer)
			}
			if err := fn(r); err != nil && ctx.Err() == nil {
				c.Log.Error("reconcile run", "run", id, "err", err)
			}
		}
	}
	do(lk.Cancel, func(r *job.Run) error {
		if (r.Status != job.CancelRequested || r.CancelSent) && !owesCancel(r) {
			return nil
		}
		return c.deliverCancel(ctx, r)
	})
	for _, id := range lk.GiveUp {
		c.Log.Warn("cancel not delivered: giving up", "run", id, "after", owedCancelWindow)
		delete(c.view.owed, id)
	}
	do(lk.Submit, func(r *job.Run) error {
		if r.Status != job.Queued || len(r.Handle) > 0 {
			return nil
		}
		return c.submit(ctx, r)
	})
	do(lk.Wait, func(r *job.Run) error {
		pt, ok := targets[r.Compute]
		if r.Status != job.Queued || len(r.Handle) > 0 || !ok {
			return nil
		}
		if h := c.calls.health(r.Compute); h.Down() {
			return c.waitUnreachable(ctx, r, pt.target, h)
		}
		if pt.pass.Max == 0 {
			return nil // it came back meanwhile: the next pass submits the run
		}
		c.setWaiting(ctx, r.ID, fullReason(r.Compute, pt.pass.Max))
		return nil
	})
	do(lk.Watch, func(r *job.Run) error {
		if len(r.Handle) == 0 || r.Status.Terminal() {
			return nil
		}
		return c.watch(ctx, r, nudged[r.ID])
	})
}

// TargetState says what the controller knows of a target's reachability from its own calls:
// "" while it answers, else since when it does not, why, and when it is tried again.
func (c *Controller) TargetState(t compute.Target) string {
	if c.calls == nil {
		return "" // not started (New)
	}
	h := c.calls.health(t.Name)
	if !h.Down() {
		return ""
	}
	return "unreachable since " + h.Since.UTC().Format("15:04 UTC") + ": " + h.Err +
		" (next try " + h.Until.UTC().Format("15:04:05 UTC") + ")"
}
