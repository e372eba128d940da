package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/controller/parents"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/parallel"
	"github.com/hangar-ml/hangar/internal/pattern"
	"github.com/hangar-ml/hangar/internal/pipeline"
	"github.com/hangar-ml/hangar/internal/spec"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// stepNameRE is a step's name (a nested step's is "<outer>.<inner>"): it becomes part of its
// run's name, and so of paths on the nodes, whoever sent the spec (the API takes JSON too).
var stepNameRE = pattern.New(`^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$`)

// createPipeline validates a pipeline job against the workspace and creates its parent run.
// The parent is never handed to a backend: the pipeline loop (pipelineloop.go) creates its
// steps' runs. What a step needs (its target, environment, uploaded data) is resolved here,
// once, so that a step that cannot run is refused at create rather than failing mid-pipeline.
func (c *Controller) createPipeline(ctx context.Context, sp job.Spec, warnings []string) (*job.Run, error) {
	if err := c.Workspace.ResolvePipeline(ctx, &sp); err != nil {
		return nil, err
	}
	if sp.Pipeline == nil || len(sp.Pipeline.Steps) == 0 {
		return nil, invalidf("jobs: a pipeline needs at least one step")
	}
	sp.Type = "pipeline"
	p := sp.Pipeline
	p.Steps = maps.Clone(p.Steps)
	name, display, err := runNames(&sp) // its steps' runs are named after it (${{name}} of their outputs)
	if err != nil {
		return nil, err
	}
	if err := c.applyDefaultDatastore(ctx, p); err != nil {
		return nil, err
	}
	given := job.PipelineRun{Steps: maps.Clone(p.Steps)} // their outputs say where they write (pipelinedata.go)
	for _, step := range slices.Sorted(maps.Keys(p.Steps)) {
		if !stepNameRE.MatchString(step) || len(step) > 200 {
			return nil, invalidf("jobs.%s: a step's name holds letters, digits, '_' and '-' and starts with a letter or '_'", step)
		}
		st := p.Steps[step]
		w, err := c.prepareStep(ctx, given, name, step, workspace.Submitter(&sp), &st)
		if err != nil {
			return nil, err
		}
		for _, s := range w {
			warnings = append(warnings, "jobs."+step+": "+s)
		}
		p.Steps[step] = st
	}
	// The pipeline runs nowhere itself; it shows its default target (the workspace's if none).
	target, err := c.Workspace.ResolveCompute(ctx, p.Settings.DefaultCompute)
	var e *Error
	if errors.As(err, &e) {
		return nil, &Error{Kind: e.Kind, Msg: "settings.default_" + e.Msg}
	} else if err != nil {
		return nil, err
	}
	r, events := c.queuedRun(sp, name, display, target.Name, "pipeline: starting its first steps", warnings)
	if err := c.createParent(ctx, "pipeline", c.Store.RunWrites.CreatePipeline, r, events, "steps", len(p.Steps)); err != nil {
		return nil, err
	}
	return r, nil
}

// prepareStep resolves one step as Create resolves a job of its own: its target, environment
// and data, with the inputs another step will produce standing in as that step's output, and
// those at a workspaceblobstore path another step writes left for when the step starts
// (writtenLater). pipeline is the pipeline's run name.
func (c *Controller) prepareStep(ctx context.Context, p job.PipelineRun, pipeline, name, by string, st *job.PipelineStep) ([]string, error) {
	field := func(err error) error {
		var e *Error
		if errors.As(err, &e) {
			return &Error{Kind: e.Kind, Msg: "jobs." + name + "." + e.Msg}
		}
		return fmt.Errorf("jobs.%s: %w", name, err)
	}
	sp, sweep, err := stepKind(name, st.Spec)
	if err != nil {
		return nil, err
	}
	target, err := c.Workspace.ResolveJobCompute(ctx, &sp) // serverless.go
	if err != nil {
		return nil, field(err)
	}
	sp.Compute = target.Name
	warnings, err := c.Workspace.ResolveEnvironment(ctx, &sp)
	if err != nil {
		return nil, field(err)
	}
	// The inputs bound when the step starts are left out here and checked by binding a
	// stand-in: the producer's output exists once the producer completed.
	sp.Inputs = maps.Clone(sp.Inputs)
	if sp.Inputs == nil {
		sp.Inputs = map[string]job.Input{}
	}
	for in := range st.From {
		delete(sp.Inputs, in)
	}
	later := writtenLater(p, pipeline, name, sp.Inputs)
	for _, in := range later {
		delete(sp.Inputs, in)
	}
	if err := c.Workspace.ResolveInputs(ctx, &sp); err != nil {
		return nil, field(err)
	}
	for _, in := range later { // resolved when the step starts
		sp.Inputs[in] = st.Spec.Inputs[in]
	}
	// The declarations (type, mode) stay with the step: startStep binds them.
	for in := range st.From {
		if decl, ok := st.Spec.Inputs[in]; ok {
			sp.Inputs[in] = decl
		}
	}
	check := sp
	check.Inputs = maps.Clone(sp.Inputs)
	for in, ref := range st.From {
		check.Inputs[in] = fromInput(st.Spec.Inputs[in], p, ref, "azureml://jobs/pending/outputs/"+ref.Output, "")
	}
	if sweep {
		// A trial is what runs on the target: its sample is checked (and the seed, shared
		// through sp.Sweep, chosen).
		if check, err = checkSweep(&check); err != nil {
			return nil, field(err)
		}
		sp.Type = "sweep"
	} else if _, err := binding.Bind(check.Command, spec.BindValues(&check)); err != nil {
		return nil, field(invalidf("command: %v", err))
	}
	w, err := c.Workspace.CheckForTarget(check, target)
	if err != nil {
		return nil, field(err)
	}
	// Its secrets, as the pipeline's submitter's (the step's run gets the same stamp).
	if err := c.Workspace.CheckSecretRefs(ctx, by, &check); err != nil {
		return nil, field(err)
	}
	warnings = append(warnings, w...)
	st.Spec = sp
	return warnings, nil
}

// stepKind is a step's spec as the job it runs as (a parallel step becomes its command), and
// whether it is a sweep; a kind of step that cannot run is refused.
func stepKind(name string, sp job.Spec) (job.Spec, bool, error) {
	if sp.Type == "" {
		sp.Type = "command"
	}
	if sp.Type == "parallel" || sp.Parallel != nil {
		var err error
		if sp, err = parallel.ToCommand(sp); err != nil {
			return sp, false, invalidf("jobs.%s.%v", name, err)
		}
	}
	sweep := sp.Type == "sweep" || sp.Sweep != nil
	switch {
	case sp.Pipeline != nil: // the decoder flattens nested pipelines; the API may not have
		return sp, false, invalidf("jobs.%s: a step cannot hold a pipeline of its own (nested pipelines are flattened into <outer>.<inner> steps)", name)
	case sweep && sp.Sweep != nil:
		sw := *sp.Sweep // its seed is chosen for this pipeline's step only
		sp.Sweep = &sw
	case sweep:
		return sp, false, invalidf("jobs.%s: the sweep's settings are missing", name)
	case sp.Type != "command":
		return sp, false, invalidf("jobs.%s.type: %s steps are not supported (command, parallel and sweep steps are)", name, sp.Type)
	}
	return sp, sweep, nil
}

// fromInput is a step's input bound to another step's output: the step's own declaration
// (type, mode) if it has one, else the producer's output type, read from manifest.
func fromInput(decl job.Input, p job.PipelineRun, ref job.StepRef, path, manifest string) job.Input {
	in := decl
	if in.Type == "" || in.IsLiteral() {
		in.Type = p.Steps[ref.Step].Spec.Outputs[ref.Output].Type
	}
	if in.Type == "" {
		in.Type = "uri_folder"
	}
	in.Value, in.Path, in.Manifest = "", path, manifest
	return in
}

// stepRunName is the run name of a step: <pipeline>_<step>, a nested step's dots made '_'.
func stepRunName(pipeline, step string) string {
	return pipeline + "_" + strings.ReplaceAll(step, ".", "_")
}

// CreateStepRun creates a step's run (its From inputs bound in sp) and its row, as
// <pipeline>_<step>, and queues it; a step already created (by a pass before a restart) is left
// as it is. The parent loop (package parents) asks for it.
func (c *Controller) CreateStepRun(ctx context.Context, p *job.Run, name, key string, sp job.Spec) error {
	tags := childTags(p, sp.Tags)
	// Azure tags a pipeline's child runs with their pipeline.
	tags["azureml.pipeline"] = p.ID
	tags["azureml.nodeid"] = name
	sp.Tags = tags
	display := sp.DisplayName
	if display == "" {
		display = name
	}
	reason := "waiting for compute " + sp.Compute
	if sp.Sweep != nil {
		reason = "sweep: starting its first trials"
	}
	r, err := c.createChild(ctx, childRun{parent: p, name: stepRunName(p.ID, name), display: display,
		description: sp.Description, compute: sp.Compute, reason: reason,
		created: fmt.Sprintf("created by pipeline %s (step %s)", p.ID, name), tags: tags, spec: sp,
		store: func(ctx context.Context, r *job.Run, events ...job.Event) error {
			return c.Store.RunWrites.CreateStep(ctx, store.Step{Pipeline: p.ID, Name: name, CacheKey: key, CreatedAt: r.CreatedAt}, r, events...)
		},
		exists: store.ErrStepExists,
	})
	if err != nil || r == nil {
		return err
	}
	c.Log.Info("step created", "pipeline", p.ID, "step", name, "run", r.ID, "compute", sp.Compute)
	return c.queueChild(ctx, r)
}

// PipelineDetail is what job show and the studio show of a pipeline: its steps in the graph's
// order with their states, runs, reuse and reasons, and why the pipeline ended.
func (n *Parents) PipelineDetail(ctx context.Context, r *job.Run) (*api.PipelineDetail, error) {
	c := n.c
	if r.Spec.Pipeline == nil {
		return nil, nil
	}
	pl := *r.Spec.Pipeline
	stored, err := c.Store.Parents.PipelineSteps(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	rows := map[string]store.Step{}
	for _, s := range stored {
		rows[s.Name] = s
	}
	reason, err := c.Store.Parents.PipelineReason(ctx, r.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	d := &api.PipelineDetail{Reason: reason, Steps: []api.PipelineStep{}}
	deps := pipeline.Deps(pl)
	for _, name := range pipeline.Order(pl) {
		st := pl.Steps[name]
		s := rows[name]
		as := api.PipelineStep{Name: name, Group: st.Group, Component: st.Component, Type: st.Spec.Type,
			Compute: st.Spec.Compute, Deps: deps[name], RunID: s.RunID, ReusedFrom: s.ReusedFrom, Reason: s.Reason}
		if as.Type == "" {
			as.Type = "command"
		}
		if _, ok := rows[name]; ok {
			as.State = string(parents.StepState(s))
		}
		if run := s.Run; run != nil {
			as.Status, as.Started, as.Ended = run.Status, run.StartedAt, run.EndedAt
			if as.Reason == "" && (run.Status == job.Failed || run.Status == job.Canceled) {
				as.Reason = run.StatusReason
			}
		}
		d.Steps = append(d.Steps, as)
	}
	return d, nil
}
