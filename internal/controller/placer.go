package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// placeTimeout bounds one Place call (a pass over a backend's targets and nodes).
const placeTimeout = 2 * time.Minute

// place calls a backend that places its runs itself (backend.Placer), with the active runs of
// its targets (mine), and applies its plan. The loop does not submit those runs itself.
func (c *Controller) place(ctx context.Context, now time.Time, typ string, p backend.Placer, targets map[string]passTarget, mine map[string]bool) {
	runs := c.view.placerRuns(mine)
	pctx, cancel := context.WithTimeout(ctx, placeTimeout)
	plan, err := p.Place(pctx, backend.PlaceInput{Now: now, Runs: runs})
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			c.Log.Error("place", "type", typ, "err", err)
		}
		return
	}
	c.wake[typ] = plan.Wake
	byName := map[string]*compute.Target{}
	for name := range mine {
		byName[name] = targets[name].target
	}
	c.applyPlacement(ctx, c.Backends[typ], byName, runs, plan)
}

// applyPlacement applies a Placer's plan: requeues and failures through the state machine, each
// placed run recorded with its placement and submitted, and the waiting runs' reasons.
func (c *Controller) applyPlacement(ctx context.Context, b backend.Backend, targets map[string]*compute.Target, runs []*job.Run, plan backend.Plan) {
	byID := map[string]*job.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	for _, n := range plan.Requeue {
		if _, err := c.Requeue(ctx, n.Run, n.Reason); err != nil {
			c.Log.Error("requeue", "run", n.Run, "err", err)
		}
	}
	for _, n := range plan.Fail {
		if _, err := c.transition(ctx, n.Run, job.Failed, n.Reason, nil, nil); err != nil {
			c.Log.Error("fail run", "run", n.Run, "err", err)
		}
	}
	for _, p := range plan.Placed {
		r := byID[p.Run]
		if r == nil || len(r.Handle) > 0 || r.Status == job.CancelRequested || r.Status.Terminal() {
			continue // handed to its backend already, or being canceled: nothing to start
		}
		if err := c.startPlaced(ctx, b, targets[r.Compute], r, p.Placement); err != nil && ctx.Err() == nil {
			c.Log.Error("start placed run", "run", r.ID, "err", err)
		}
	}
	for _, w := range plan.Waiting {
		if r := byID[w.Run]; r != nil && r.StatusReason != w.Reason {
			c.setWaiting(ctx, r.ID, w.Reason)
		}
	}
}

// startPlaced records where a run was placed, with the run, and submits it there on the
// target's calls. A run its backend cannot start there (a node went away meanwhile) loses its
// placement and waits to be placed again, with the reason.
func (c *Controller) startPlaced(ctx context.Context, b backend.Backend, t *compute.Target, r *job.Run, p job.Placement) error {
	if c.calls.isBusy(r.ID) {
		return nil // its submit is under way, with the placement recorded then
	}
	attempt := max(r.Attempt, 1)
	if !r.Placement.Equal(&p) {
		err := c.Store.Cluster.SetPlacement(ctx, r.ID, attempt, p, c.Now())
		if errors.Is(err, store.ErrStale) {
			return nil // it ended or was requeued meanwhile
		}
		if err != nil {
			return err
		}
		r.Placement = &p // the view's run (the loop's own) has it until it is read again
	}
	run := *r // the call's own copy
	c.calls.start(t.Name, &call{run: r.ID, submit: true, fn: func() {
		h, err := c.launch(ctx, b, t, &run)
		c.calls.record(t.Name, err)
		if err != nil {
			cerr := c.Store.Cluster.ClearPlacement(ctx, run.ID, attempt)
			c.setWaiting(ctx, run.ID, fmt.Sprintf("could not start on nodes %s: %v; placing it again", strings.Join(p.Nodes, ", "), err))
			err = errors.Join(err, cerr)
		} else {
			err = c.submitted(ctx, b, t, &run, h)
		}
		if err != nil && ctx.Err() == nil {
			c.Log.Error("start placed run", "run", run.ID, "err", err)
		}
	}})
	return nil
}

// setWaiting shows why a queued run waits (the loop's view learns it through Changed).
func (c *Controller) setWaiting(ctx context.Context, id, why string) {
	wrote := false
	_, err := c.Store.RunWrites.UpdateRun(ctx, id, func(r *job.Run) ([]job.Event, error) {
		if r.Status == job.Queued && len(r.Handle) == 0 && r.StatusReason != why {
			r.StatusReason, wrote = why, true
		}
		return nil, nil
	})
	if err != nil {
		c.Log.Error("waiting reason", "run", id, "err", err)
	}
	if wrote {
		c.Changed(id)
	}
}
