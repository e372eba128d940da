package parents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/store"
	hpo "github.com/hangar-ml/hangar/internal/sweep"
)

// driveSweep does one sweep's pass: cascade a cancel; else stop what the engine stops, start
// what it starts, record the best trial, and end the sweep once it is done and nothing runs.
func (l *Loop) driveSweep(ctx context.Context, p *job.Run) error {
	cfg := p.Spec.Sweep.Config
	stored, err := l.cfg.Store.Trials(ctx, p.ID)
	if err != nil {
		return err
	}
	trials, active, err := l.trialHistory(ctx, cfg, stored)
	if err != nil {
		return err
	}
	if p.Status == job.CancelRequested {
		return l.cancelSweep(ctx, p, stored, active)
	}
	var started time.Time
	if p.StartedAt != nil {
		started = *p.StartedAt
	} else {
		started = p.CreatedAt
	}
	d := l.cfg.SweepDecide(cfg, hpo.State{Trials: trials, Started: started, Now: l.cfg.Now()})
	for _, s := range d.Stop {
		if err := l.stopTrial(ctx, p, stored, s); err != nil {
			return err
		}
	}
	next := 0
	for _, t := range stored {
		next = max(next, t.Index+1)
	}
	for i, params := range d.Start {
		if err := l.createTrial(ctx, p, next+i, params); err != nil {
			return err
		}
	}
	if len(d.Start) > 0 && p.Status == job.Queued {
		if _, err := l.cfg.Runs.Transition(ctx, p.ID, job.Running, "sweep: running its trials"); err != nil {
			return err
		}
	}
	if err := l.recordBest(ctx, p, cfg, trials, stored, d); err != nil {
		return err
	}
	if d.Done && active == 0 && len(d.Start) == 0 {
		return l.endSweep(ctx, p, trials, d.Reason)
	}
	return nil
}

// trialHistory turns the stored trials into the engine's history: state, typed parameters and
// the primary metric's series (both tracking writers: MLflow and the metrics file). active
// counts the trials not ended.
func (l *Loop) trialHistory(ctx context.Context, cfg hpo.Config, stored []store.Trial) ([]hpo.Trial, int, error) {
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
			series, err := l.cfg.Store.MetricSeries(ctx, r.ID, cfg.Objective.Metric)
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
func (l *Loop) stopTrial(ctx context.Context, p *job.Run, stored []store.Trial, s hpo.Stop) error {
	i := slices.IndexFunc(stored, func(t store.Trial) bool { return t.Index == s.Index })
	if i < 0 || stored[i].Run == nil || stored[i].Run.Status.Terminal() || stored[i].Run.Status == job.CancelRequested {
		return nil
	}
	if err := l.cfg.Store.StopTrial(ctx, p.ID, s.Index, s.Reason); err != nil {
		return err
	}
	l.cfg.Log.Info("trial stopped", "sweep", p.ID, "trial", s.Index, "reason", s.Reason)
	_, err := l.cfg.Runs.Transition(ctx, stored[i].RunID, job.CancelRequested, "stopped by sweep "+p.ID+": "+s.Reason)
	l.cfg.Runs.Kick()
	return err
}

// cancelSweep cascades a sweep's cancel to its trials; the sweep is Canceled once they ended.
func (l *Loop) cancelSweep(ctx context.Context, p *job.Run, stored []store.Trial, active int) error {
	for _, t := range stored {
		if t.Run == nil || t.Run.Status.Terminal() || t.Run.Status == job.CancelRequested {
			continue
		}
		if _, err := l.cfg.Runs.Transition(ctx, t.RunID, job.CancelRequested, "its sweep "+p.ID+" was canceled"); err != nil {
			return err
		}
		l.cfg.Runs.Kick()
	}
	if active > 0 {
		return nil
	}
	_, err := l.cfg.Runs.Transition(ctx, p.ID, job.Canceled, "canceled by the user")
	return err
}

// recordBest stores the best trial so far (sweep.Best) when it changed.
func (l *Loop) recordBest(ctx context.Context, p *job.Run, cfg hpo.Config, trials []hpo.Trial, stored []store.Trial, d hpo.Decision) error {
	best, ok := hpo.Best(cfg, trials)
	old, err := l.cfg.Store.SweepOutcome(ctx, p.ID)
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
	if err := l.cfg.Store.SetSweepOutcome(ctx, p.ID, o); err != nil {
		return err
	}
	l.cfg.Runs.Changed(p.ID)
	return nil
}

// bestValue is a trial's final primary metric: its last report, as Azure reads it.
func bestValue(_ hpo.Config, series []hpo.Point) float64 { return series[len(series)-1].Value }

func sameMetric(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// endSweep ends a sweep whose engine is done and whose trials all ended: Completed when a trial
// completed, else Failed.
func (l *Loop) endSweep(ctx context.Context, p *job.Run, trials []hpo.Trial, reason string) error {
	completed := 0
	for _, t := range trials {
		if t.State == hpo.Completed {
			completed++
		}
	}
	out, err := l.cfg.Store.SweepOutcome(ctx, p.ID)
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
	if err := l.takeBestOutputs(ctx, p.ID, out.BestRunID); err != nil {
		return err
	}
	_, err = l.cfg.Runs.Transition(ctx, p.ID, to, msg)
	return err
}

// takeBestOutputs makes the best trial's named outputs the sweep's, as Azure's sweep job's
// outputs are its best trial's (a pipeline step reading a sweep step's output reads them).
func (l *Loop) takeBestOutputs(ctx context.Context, sweep, best string) error {
	if best == "" {
		return nil
	}
	r, err := l.cfg.Reader.Run(ctx, best)
	if errors.Is(err, store.ErrNotFound) || (err == nil && len(r.NamedOutputs) == 0) {
		return nil
	} else if err != nil {
		return err
	}
	return l.cfg.Runs.SetNamedOutputs(ctx, sweep, maps.Clone(r.NamedOutputs))
}

// createTrial creates trial index of sweep p (a command run named <sweep>_<index>, through the
// run core); a trial already created (by a pass before a restart) is left as it is.
func (l *Loop) createTrial(ctx context.Context, p *job.Run, index int, params hpo.Params) error {
	sp, err := spec.TrialSpec(p.Spec, params)
	if err != nil {
		return fmt.Errorf("trial %d of %s: %w", index, p.ID, err)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("trial %d of %s: %w", index, p.ID, err)
	}
	return l.cfg.Runs.CreateTrialRun(ctx, p, index, raw, sp)
}
