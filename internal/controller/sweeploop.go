package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	hpo "github.com/hangar-ml/hangar/internal/sweep"
)

// sweepTick is the sweep loop's period (it is also kicked when a sweep is created or canceled
// and when a trial ends).
const sweepTick = time.Second

// sweepsMemo is the sweep loop's wake-up channel; everything else it knows is in the store, so
// that a restarted server continues each sweep where it was.
type sweepsMemo struct {
	once sync.Once
	kick chan struct{}
}

func (m *sweepsMemo) ch() chan struct{} {
	m.once.Do(func() { m.kick = make(chan struct{}, 1) })
	return m.kick
}

// KickSweeps wakes the sweep loop.
func (c *Controller) KickSweeps() {
	select {
	case c.sweeps.ch() <- struct{}{}:
	default:
	}
}

// RunSweeps drives every active sweep and pipeline (parentPass) until ctx ends.
func (c *Controller) RunSweeps(ctx context.Context) {
	c.OnChange(func(string) { c.KickSweeps() }) // a child ended, a parent was canceled
	t := time.NewTicker(sweepTick)
	defer t.Stop()
	for {
		if err := c.parentPass(ctx); err != nil && ctx.Err() == nil {
			c.Log.Error("parent pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.sweeps.ch():
		}
	}
}

// SweepPass is one pass over the active sweeps: each reads its trials from the store, asks
// sweep.Decide what to do and does it.
func (c *Controller) SweepPass(ctx context.Context) error {
	return c.parentPassOver(ctx, "sweep", c.Store.ActiveSweeps, c.driveSweep)
}

// decide is the sweep engine (a field so that tests can replace it).
func (c *Controller) decide(cfg hpo.Config, st hpo.State) hpo.Decision {
	if c.SweepDecide != nil {
		return c.SweepDecide(cfg, st)
	}
	return hpo.Decide(cfg, st)
}

// driveSweep does one sweep's pass: cascade a cancel; else stop what the engine stops, start
// what it starts, record the best trial, and end the sweep once it is done and nothing runs.
func (c *Controller) driveSweep(ctx context.Context, p *job.Run) error {
	cfg := p.Spec.Sweep.Config
	stored, err := c.Store.Trials(ctx, p.ID)
	if err != nil {
		return err
	}
	trials, active, err := c.trialHistory(ctx, cfg, stored)
	if err != nil {
		return err
	}
	if p.Status == job.CancelRequested {
		return c.cancelSweep(ctx, p, stored, active)
	}
	var started time.Time
	if p.StartedAt != nil {
		started = *p.StartedAt
	} else {
		started = p.CreatedAt
	}
	d := c.decide(cfg, hpo.State{Trials: trials, Started: started, Now: c.Now()})
	for _, s := range d.Stop {
		if err := c.stopTrial(ctx, p, stored, s); err != nil {
			return err
		}
	}
	next := 0
	for _, t := range stored {
		next = max(next, t.Index+1)
	}
	for i, params := range d.Start {
		if err := c.createTrial(ctx, p, next+i, params); err != nil {
			return err
		}
	}
	if len(d.Start) > 0 && p.Status == job.Queued {
		if _, err := c.transition(ctx, p.ID, job.Running, "sweep: running its trials", nil, nil); err != nil {
			return err
		}
	}
	if err := c.recordBest(ctx, p, cfg, trials, stored, d); err != nil {
		return err
	}
	if d.Done && active == 0 && len(d.Start) == 0 {
		return c.endSweep(ctx, p, trials, d.Reason)
	}
	return nil
}

// trialHistory turns the stored trials into the engine's history: state, typed parameters and
// the primary metric's series (both tracking writers: MLflow and the metrics file). active
// counts the trials not ended.
func (c *Controller) trialHistory(ctx context.Context, cfg hpo.Config, stored []store.Trial) ([]hpo.Trial, int, error) {
	out := make([]hpo.Trial, 0, len(stored))
	active := 0
	for _, t := range stored {
		params, err := typedParams(cfg.Space, t.Params)
		if err != nil {
			return nil, 0, fmt.Errorf("trial %d of %s: %w", t.Index, t.Parent, err)
		}
		ht := hpo.Trial{Index: t.Index, Params: params, State: hpo.Canceled, Stopped: t.Stopped}
		if r := t.Run; r != nil {
			ht.State = trialState(r.Status)
			if r.StartedAt != nil {
				ht.Started = *r.StartedAt
			}
			if r.EndedAt != nil {
				ht.Ended = *r.EndedAt
			}
			series, err := c.Store.MetricSeries(ctx, r.ID, cfg.Objective.Metric)
			if err != nil {
				return nil, 0, err
			}
			for _, m := range series {
				ht.Metrics = append(ht.Metrics, hpo.Point{Step: m.Step, Value: m.Value})
			}
		}
		if ht.State == hpo.Queued || ht.State == hpo.Running {
			active++
		}
		out = append(out, ht)
	}
	return out, active, nil
}

// trialState is a run's state as the sweep engine sees it.
func trialState(s job.State) hpo.TrialState {
	switch s {
	case job.Completed:
		return hpo.Completed
	case job.Failed:
		return hpo.Failed
	case job.Canceled:
		return hpo.Canceled
	case job.Running, job.Finalizing, job.NotResponding, job.CancelRequested:
		return hpo.Running
	}
	return hpo.Queued
}

// typedParams reads stored parameters back with the types the engine drew them with (JSON
// alone would turn 3.0 into 3): randint's are integers, choices are the choice's own values,
// the others floats.
func typedParams(space hpo.Space, raw json.RawMessage) (hpo.Params, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	out := hpo.Params{}
	for name, v := range m {
		e := space[name]
		switch e.Kind {
		case "randint":
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("params.%s: %w", name, err)
			}
			out[name] = n
		case "choice":
			found := false
			for _, cand := range e.Values {
				if b, err := json.Marshal(cand); err == nil && bytes.Equal(b, v) {
					out[name], found = cand, true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("params.%s: %s is not one of the choices", name, v)
			}
		default:
			var f float64
			if err := json.Unmarshal(v, &f); err != nil {
				return nil, fmt.Errorf("params.%s: %w", name, err)
			}
			out[name] = f
		}
	}
	return out, nil
}

// stopTrial records why the sweep stops a trial, then cancels its run with that reason.
func (c *Controller) stopTrial(ctx context.Context, p *job.Run, stored []store.Trial, s hpo.Stop) error {
	i := slices.IndexFunc(stored, func(t store.Trial) bool { return t.Index == s.Index })
	if i < 0 || stored[i].Run == nil || stored[i].Run.Status.Terminal() || stored[i].Run.Status == job.CancelRequested {
		return nil
	}
	if err := c.Store.StopTrial(ctx, p.ID, s.Index, s.Reason); err != nil {
		return err
	}
	c.Log.Info("trial stopped", "sweep", p.ID, "trial", s.Index, "reason", s.Reason)
	_, err := c.transition(ctx, stored[i].RunID, job.CancelRequested, "stopped by sweep "+p.ID+": "+s.Reason, nil, nil)
	c.Kick()
	return err
}

// cancelSweep cascades a sweep's cancel to its trials; the sweep is Canceled once they ended.
func (c *Controller) cancelSweep(ctx context.Context, p *job.Run, stored []store.Trial, active int) error {
	for _, t := range stored {
		if t.Run == nil || t.Run.Status.Terminal() || t.Run.Status == job.CancelRequested {
			continue
		}
		if _, err := c.transition(ctx, t.RunID, job.CancelRequested, "its sweep "+p.ID+" was canceled", nil, nil); err != nil {
			return err
		}
		c.Kick()
	}
	if active > 0 {
		return nil
	}
	_, err := c.transition(ctx, p.ID, job.Canceled, "canceled by the user", nil, nil)
	return err
}

// recordBest stores the best trial so far (sweep.Best) when it changed.
func (c *Controller) recordBest(ctx context.Context, p *job.Run, cfg hpo.Config, trials []hpo.Trial, stored []store.Trial, d hpo.Decision) error {
	best, ok := hpo.Best(cfg, trials)
	old, err := c.Store.SweepOutcome(ctx, p.ID)
	if err != nil {
		return err
	}
	o := old
	if ok {
		i := slices.IndexFunc(stored, func(t store.Trial) bool { return t.Index == best.Index })
		if i >= 0 && len(best.Metrics) > 0 {
			v := bestValue(cfg, best.Metrics)
			o.BestRunID, o.BestIndex, o.BestParams, o.BestMetric = stored[i].RunID, best.Index, stored[i].Params, &v
		}
	}
	if d.Done && o.DoneReason == "" {
		o.DoneReason = d.Reason
	}
	if o.BestRunID == old.BestRunID && o.DoneReason == old.DoneReason && sameMetric(o.BestMetric, old.BestMetric) {
		return nil
	}
	if err := c.Store.SetSweepOutcome(ctx, p.ID, o); err != nil {
		return err
	}
	c.Changed(p.ID)
	return nil
}

// bestValue is a trial's final primary metric: its last report, as Azure reads it.
func bestValue(_ hpo.Config, series []hpo.Point) float64 { return series[len(series)-1].Value }

func sameMetric(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// endSweep ends a sweep whose engine is done and whose trials all ended: Completed when a trial
// completed, else Failed.
func (c *Controller) endSweep(ctx context.Context, p *job.Run, trials []hpo.Trial, reason string) error {
	completed := 0
	for _, t := range trials {
		if t.State == hpo.Completed {
			completed++
		}
	}
	out, err := c.Store.SweepOutcome(ctx, p.ID)
	if err != nil {
		return err
	}
	if reason == "" {
		reason = "no more trials to run"
	}
	msg := fmt.Sprintf("sweep done: %s; %d of %d trials completed", reason, completed, len(trials))
	if out.BestRunID != "" {
		msg += "; best trial " + out.BestRunID
	}
	to := job.Completed
	if completed == 0 {
		to = job.Failed
	}
	if err := c.takeBestOutputs(ctx, p.ID, out.BestRunID); err != nil {
		return err
	}
	_, err = c.transition(ctx, p.ID, to, msg, nil, nil)
	return err
}

// takeBestOutputs makes the best trial's named outputs the sweep's, as Azure's sweep job's
// outputs are its best trial's (a pipeline step reading a sweep step's output reads them).
func (c *Controller) takeBestOutputs(ctx context.Context, sweep, best string) error {
	if best == "" {
		return nil
	}
	r, err := c.Store.Run(ctx, best)
	if errors.Is(err, store.ErrNotFound) || (err == nil && len(r.NamedOutputs) == 0) {
		return nil
	} else if err != nil {
		return err
	}
	_, err = c.Store.UpdateRun(ctx, sweep, func(s *job.Run) ([]job.Event, error) {
		s.NamedOutputs = maps.Clone(r.NamedOutputs)
		return nil, nil
	})
	return err
}
