package parents

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pipeline"
	"github.com/hangar-ml/hangar/internal/store"
)

// Step states stored for a step with no run of its own.
const (
	stepReused  = string(pipeline.Completed)
	stepSkipped = string(pipeline.Skipped)
	stepFailed  = string(pipeline.Failed) // its inputs could not be bound
)

// drivePipeline decides and applies until a decision changes nothing more at once: a step
// reused from the cache or skipped lets the next steps start in the same pass, so that a fully
// cached pipeline completes in one pass.
func (l *Loop) drivePipeline(ctx context.Context, id string) error {
	for range 1000 {
		p, err := l.cfg.Reader.Run(ctx, id)
		if err != nil || p.Status.Terminal() || p.Spec.Pipeline == nil {
			return err
		}
		again, err := l.pipelineStep(ctx, p)
		if err != nil || !again {
			return err
		}
	}
	return fmt.Errorf("pipeline %s: no end to its decisions", id)
}

// pipelineStep does one decision: skip, cancel, start (or reuse), and end the pipeline when
// the planner says it is done. again says a step changed state at once (reused, skipped,
// failed binding), so deciding again may do more.
func (l *Loop) pipelineStep(ctx context.Context, p *job.Run) (again bool, err error) {
	pl := *p.Spec.Pipeline
	stored, err := l.cfg.Store.PipelineSteps(ctx, p.ID)
	if err != nil {
		return false, err
	}
	rows := map[string]store.Step{}
	st := pipeline.State{Steps: map[string]pipeline.StepState{}, Canceling: p.Status == job.CancelRequested}
	for _, s := range stored {
		rows[s.Name] = s
		st.Steps[s.Name] = StepState(s)
	}
	d := l.cfg.PipelineDecide(pl, st)
	for _, s := range d.Skip {
		err := l.cfg.Store.PutStep(ctx, store.Step{Pipeline: p.ID, Name: s.Step, State: stepSkipped, Reason: s.Reason, CreatedAt: l.cfg.Now()})
		if err != nil && !errors.Is(err, store.ErrStepExists) {
			return false, err
		}
		again = true
	}
	for _, name := range d.Cancel {
		if err := l.cancelStep(ctx, p, rows[name], st); err != nil {
			return false, err
		}
	}
	for _, name := range d.Start {
		reused, err := l.startStep(ctx, p, rows, name)
		if err != nil {
			return false, err
		}
		again = again || reused
	}
	// Running from its first step on (a restart between a step's creation and this finds
	// the step stored and the pipeline still Queued).
	if (again || len(d.Start) > 0 || len(stored) > 0) && p.Status == job.Queued {
		if p, err = l.cfg.Runs.Transition(ctx, p.ID, job.Running, "pipeline: running its steps"); err != nil {
			return false, err
		}
	}
	if again || len(d.Start) > 0 || len(d.Skip) > 0 {
		l.cfg.Runs.Changed(p.ID)
	}
	if d.Done {
		return false, l.endPipeline(ctx, p, rows, d)
	}
	return again, nil
}

// StepState is a stored step's state as the planner sees it.
func StepState(s store.Step) pipeline.StepState {
	if s.RunID == "" {
		return pipeline.StepState(s.State)
	}
	if s.Run == nil { // its run was deleted: it will never complete
		return pipeline.Canceled
	}
	switch s.Run.Status {
	case job.Completed:
		return pipeline.Completed
	case job.Failed:
		return pipeline.Failed
	case job.Canceled:
		return pipeline.Canceled
	case job.NotStarted, job.Queued:
		return pipeline.Queued
	}
	return pipeline.Running
}

// producerRun is the run whose outputs a completed step offers: its own, or the one it reused.
func producerRun(s store.Step) string {
	if s.ReusedFrom != "" {
		return s.ReusedFrom
	}
	return s.RunID
}

// startStep binds a step's inputs to its producers' outputs, then reuses an earlier run of the
// same step from the step cache (unless force_rerun) or creates the step's run. reused says
// the step completed at once (from the cache) or could not start (an output it reads is missing).
func (l *Loop) startStep(ctx context.Context, p *job.Run, rows map[string]store.Step, name string) (bool, error) {
	pl := *p.Spec.Pipeline
	step := pl.Steps[name]
	sp := step.Spec
	sp.Inputs = maps.Clone(sp.Inputs)
	if sp.Inputs == nil && len(step.From) > 0 {
		sp.Inputs = map[string]job.Input{}
	}
	for in, ref := range step.From {
		bound, err := l.cfg.Resolver.ResolveStepInput(ctx, pl, name, in, ref, producerRun(rows[ref.Step]))
		if err != nil {
			reason := fmt.Sprintf("input %s: step %s's output %s: %v", in, ref.Step, ref.Output, err)
			return true, l.recordStep(ctx, store.Step{Pipeline: p.ID, Name: name, State: stepFailed, Reason: reason})
		}
		sp.Inputs[in] = bound
	}
	if err := l.cfg.Resolver.ResolveStartData(ctx, p, name, &sp); err != nil {
		return true, l.recordStep(ctx, store.Step{Pipeline: p.ID, Name: name, State: stepFailed, Reason: err.Error()})
	}
	bound := step
	bound.Spec = sp
	key, ok := pipeline.CacheKey(bound, sp.Inputs)
	if !ok {
		key = ""
	}
	if key != "" && !pl.Settings.ForceRerun {
		hit, err := l.cfg.Store.CachedStep(ctx, key)
		if err != nil {
			return false, err
		}
		if hit != "" {
			l.cfg.Log.Info("step reused", "pipeline", p.ID, "step", name, "from", hit)
			return true, l.recordStep(ctx, store.Step{Pipeline: p.ID, Name: name, State: stepReused,
				ReusedFrom: hit, CacheKey: key, Reason: "reused the outputs of " + hit})
		}
	}
	return false, l.cfg.Runs.CreateStepRun(ctx, p, name, key, sp)
}

// recordStep stores a step that has no run; one stored already (a pass before a restart) stays.
func (l *Loop) recordStep(ctx context.Context, s store.Step) error {
	s.CreatedAt = l.cfg.Now()
	if err := l.cfg.Store.PutStep(ctx, s); err != nil && !errors.Is(err, store.ErrStepExists) {
		return err
	}
	return nil
}

// cancelStep cancels a queued or running step's run, saying why: the pipeline was canceled, or
// a step failed and continue_on_step_failure is off.
func (l *Loop) cancelStep(ctx context.Context, p *job.Run, s store.Step, st pipeline.State) error {
	if s.Run == nil || s.Run.Status.Terminal() || s.Run.Status == job.CancelRequested {
		return nil
	}
	reason := "its pipeline " + p.ID + " was canceled"
	if !st.Canceling {
		var failed []string
		for name, state := range st.Steps {
			if state == pipeline.Failed || state == pipeline.Canceled {
				failed = append(failed, name)
			}
		}
		slices.Sort(failed)
		reason = fmt.Sprintf("canceled by pipeline %s: step %s did not complete and continue_on_step_failure is false",
			p.ID, strings.Join(failed, ", "))
	}
	if err := l.cfg.Store.SetStepReason(ctx, p.ID, s.Name, reason); err != nil {
		return err
	}
	l.cfg.Log.Info("step canceled", "pipeline", p.ID, "step", s.Name, "reason", reason)
	_, err := l.cfg.Runs.Transition(ctx, s.RunID, job.CancelRequested, reason)
	l.cfg.Runs.Kick()
	return err
}

// endPipeline binds the pipeline's own outputs to the steps that produced them (so that
// `job download <pipeline> --output-name y` gets them), records why it ended and ends it.
func (l *Loop) endPipeline(ctx context.Context, p *job.Run, rows map[string]store.Step, d pipeline.Decision) error {
	named := map[string]string{}
	for out, ref := range p.Spec.Pipeline.Outputs {
		id := producerRun(rows[ref.Step])
		if id == "" {
			continue
		}
		r, err := l.cfg.Reader.Run(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if h := r.NamedOutputs[ref.Output]; h != "" {
			named[out] = h
		}
	}
	if len(named) > 0 {
		if err := l.cfg.Runs.SetNamedOutputs(ctx, p.ID, named); err != nil {
			return fmt.Errorf("bind the outputs of pipeline %s: %w", p.ID, err)
		}
	}
	if err := l.cfg.Store.SetPipelineReason(ctx, p.ID, d.Reason); err != nil {
		return err
	}
	to := map[string]job.State{pipeline.StatusCompleted: job.Completed, pipeline.StatusFailed: job.Failed,
		pipeline.StatusCanceled: job.Canceled}[d.Status]
	if to == "" {
		return fmt.Errorf("pipeline %s: the planner ended it with status %q", p.ID, d.Status)
	}
	if p.Status == job.Queued && to != job.Canceled {
		if _, err := l.cfg.Runs.Transition(ctx, p.ID, job.Running, "pipeline: running its steps"); err != nil {
			return err
		}
	}
	msg := "pipeline done: every step completed"
	if d.Reason != "" {
		msg = "pipeline done: " + d.Reason
	}
	l.cfg.Log.Info("pipeline ended", "run", p.ID, "status", to, "reason", d.Reason)
	_, err := l.cfg.Runs.Transition(ctx, p.ID, to, msg)
	return err
}
