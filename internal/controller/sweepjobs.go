package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pattern"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/store"
)

// paramName is a search-space parameter's name: it becomes the name of an input of each trial.
var paramName = pattern.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// createSweep validates a sweep job against the workspace and creates its parent run. The
// parent is never handed to a backend: the sweep loop (sweeploop.go) creates its trials. What a
// trial needs (target, environment, uploaded data) is resolved here, once, on the template.
func (c *Controller) createSweep(ctx context.Context, sp job.Spec, warnings []string) (*job.Run, error) {
	if err := c.Parents.resolveSweepTrial(ctx, &sp); err != nil {
		return nil, err
	}
	sample, err := checkSweep(&sp)
	if err != nil {
		return nil, err
	}
	r, events, err := c.validatedRun(ctx, sp, &sample, "sweep: starting its first trials", warnings)
	if err != nil {
		return nil, err
	}
	err = c.createParent(ctx, "sweep", c.Store.RunWrites.CreateSweep, r, events,
		"compute", r.Compute, "trials", sp.Sweep.Config.Limits.MaxTotalTrials)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// checkSweep validates a sweep job's settings, chooses its seed (stored with the run, so that a
// restart draws the same values) and returns a sample trial whose command bound.
func checkSweep(sp *job.Spec) (job.Spec, error) {
	if sp.Sweep == nil {
		return job.Spec{}, invalidf("sweep: the sweep's settings are missing")
	}
	sp.Type = "sweep"
	cfg := &sp.Sweep.Config
	switch {
	case len(cfg.Space) == 0:
		return job.Spec{}, invalidf("search_space: required")
	case cfg.Objective.Metric == "":
		return job.Spec{}, invalidf("objective.primary_metric: required")
	case cfg.Limits.MaxTotalTrials < 1 || cfg.Limits.MaxTotalTrials > spec.MaxSweepTrials:
		return job.Spec{}, invalidf("limits.max_total_trials: expected 1..%d, got %d", spec.MaxSweepTrials, cfg.Limits.MaxTotalTrials)
	}
	if err := cfg.Validate(); err != nil {
		return job.Spec{}, invalidf("%v", err)
	}
	for name := range cfg.Space {
		if !paramName.MatchString(name) {
			return job.Spec{}, invalidf("search_space.%s: a parameter name holds only letters, digits and _ and starts with a letter or _", name)
		}
	}
	if cfg.Sampling.Seed == 0 && cfg.Sampling.Type != "grid" {
		// Stored with the run: a restart draws the same values.
		cfg.Sampling.Seed = rand.Int64N(1<<62) + 1
	}
	sample, err := spec.TrialSpec(*sp, spec.SampleParams(cfg.Space))
	if err != nil {
		return job.Spec{}, invalidf("trial: %v", err)
	}
	if _, err := binding.Bind(sample.Command, spec.BindValues(&sample)); err != nil {
		return job.Spec{}, invalidf("trial.command: %v", err)
	}
	return sample, nil
}

// CreateTrialRun creates trial index of sweep p (its spec sp, drawn with params) as a command
// run named <sweep>_<index>, and queues it; a trial already created (by a pass before a restart)
// is left as it is. The parent loop (package parents) asks for it.
func (c *Controller) CreateTrialRun(ctx context.Context, p *job.Run, index int, raw json.RawMessage, sp job.Spec) error {
	r, err := c.createChild(ctx, childRun{parent: p, name: fmt.Sprintf("%s_%d", p.ID, index),
		display: fmt.Sprintf("%s trial %d", p.DisplayName, index), description: p.Description,
		compute: p.Compute, reason: "waiting for compute " + p.Compute,
		created: fmt.Sprintf("created by sweep %s (trial %d)", p.ID, index), tags: childTags(p, nil), spec: sp,
		store: func(ctx context.Context, r *job.Run, events ...job.Event) error {
			return c.Store.RunWrites.CreateTrial(ctx, p.ID, index, raw, r, events...)
		},
		exists: store.ErrTrialExists,
	})
	if err != nil || r == nil {
		return err
	}
	c.Log.Info("trial created", "sweep", p.ID, "trial", index, "run", r.ID)
	return c.queueChild(ctx, r)
}

// SweepDetail is what job show and the studio show of a sweep: its trials and its best one.
func (n *Parents) SweepDetail(ctx context.Context, r *job.Run) (*api.SweepDetail, error) {
	c := n.c
	if r.Spec.Sweep == nil {
		return nil, nil
	}
	cfg := r.Spec.Sweep.Config
	trials, err := c.Store.Parents.Trials(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	out, err := c.Store.Parents.SweepOutcome(ctx, r.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	d := &api.SweepDetail{Metric: cfg.Objective.Metric, Goal: cfg.Objective.Goal, Sampling: cfg.Sampling.Type,
		MaxTotalTrials: cfg.Limits.MaxTotalTrials, MaxConcurrentTrials: cfg.Limits.MaxConcurrentTrials,
		BestChildRunID: out.BestRunID, BestMetric: out.BestMetric, DoneReason: out.DoneReason}
	if out.BestRunID != "" {
		d.BestParams = out.BestParams
	}
	if cfg.Termination != nil {
		d.EarlyTermination = cfg.Termination.Type
	}
	for _, t := range trials {
		at := api.SweepTrial{Index: t.Index, RunID: t.RunID, Params: t.Params, Stopped: t.Stopped, Status: "Deleted"}
		if t.Run != nil {
			at.Status, at.DisplayName = t.Run.Status, t.Run.DisplayName
			series, err := c.Store.Parents.MetricSeries(ctx, t.RunID, cfg.Objective.Metric)
			if err != nil {
				return nil, err
			}
			for _, m := range series {
				at.Series = append(at.Series, api.SweepPoint{Step: m.Step, Value: m.Value, Time: m.Time})
			}
			if n := len(series); n > 0 {
				v := series[n-1].Value
				at.Metric = &v
			}
		}
		d.Trials = append(d.Trials, at)
	}
	return d, nil
}
