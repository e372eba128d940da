package workspace

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pipeline"
	"github.com/hangar-ml/hangar/internal/spec"
)

// maxComponentRounds bounds registered pipeline components that use registered pipeline
// components, so that one that uses itself is refused rather than expanded forever.
const maxComponentRounds = 8

// resolvePipeline is called by createPipeline (pipelinejobs.go).
//
// It makes a decoded pipeline job ready to run: each step that still names a registered
// component (azureml:<name>:<version> or azureml:<name>@latest, spec.Registered) takes the
// component's definition from the store: a command component's step, the inputs the step gives
// checked against the declared types, min, max and enum; a pipeline component's steps,
// inlined as "<step>.<inner>". Steps without a compute take settings.default_compute, and the
// graph is checked (pipeline.Check). Errors name the field: jobs.<step>.<field>.
func (w *Workspace) ResolvePipeline(ctx context.Context, sp *job.Spec) error {
	p := sp.Pipeline
	if p == nil {
		return Invalidf("jobs: required")
	}
	if spec.Registered(job.PipelineStep{Component: p.Component}) {
		if err := w.resolveTopComponent(ctx, sp); err != nil {
			return err
		}
	}
	steps := map[string]component.Step{}
	for name, s := range p.Steps {
		steps[name] = component.Step{PipelineStep: s}
	}
	groups := map[string]map[string]job.StepRef{}
	for round := 0; ; round++ {
		var pending []string
		for name, s := range steps {
			if spec.Registered(s.PipelineStep) {
				pending = append(pending, name)
			}
		}
		if len(pending) == 0 {
			break
		}
		if round == maxComponentRounds {
			return Invalidf("jobs.%s.component: components nested more than %d deep (does a component use itself?)", slices.Min(pending), maxComponentRounds)
		}
		slices.Sort(pending)
		for _, name := range pending {
			if err := w.resolveStep(ctx, steps, groups, name, p.Settings.DefaultCompute); err != nil {
				return err
			}
		}
	}
	outputs := maps.Clone(p.Outputs)
	for range maxComponentRounds { // a group's output may name a group inlined inside it
		if errs := component.Follow(steps, outputs, groups); len(errs) > 0 {
			return Invalidf("%v", errs[0])
		}
	}
	p.Steps, p.Outputs = map[string]job.PipelineStep{}, outputs
	for name, s := range steps {
		if s.Spec.Compute == "" {
			s.Spec.Compute = p.Settings.DefaultCompute
		}
		p.Steps[name] = s.PipelineStep
	}
	if err := pipeline.Check(*p); err != nil {
		return Invalidf("%v", err)
	}
	return nil
}

// resolveTopComponent makes a pipeline job defined by a registered pipeline component
// (`component: azureml:<name>@latest` at its top) the component's steps, under their own names:
// the job's inputs are the component's values, its outputs (only the fields it gave) are put on
// the component's outputs and on the steps that write them, as the CLI does for a file.
func (w *Workspace) resolveTopComponent(ctx context.Context, sp *job.Spec) error {
	p := sp.Pipeline
	if len(p.Steps) > 0 {
		return Invalidf("jobs: give jobs or component, not both")
	}
	v, err := w.Components.Resolve(ctx, strings.TrimPrefix(p.Component, "azureml:"))
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return &Error{Kind: e.Kind, Msg: "component: " + e.Msg}
		}
		return err
	}
	if v.Type != component.Pipeline {
		return Invalidf("component: %s is a %s component; a pipeline job's component is a pipeline component (type: pipeline)", v.ID(), v.Type)
	}
	steps, outs, errs := component.Inline("", v.Spec, component.Given{Values: sp.Inputs}, p.Settings.DefaultCompute)
	if len(errs) > 0 {
		return Invalidf("%v (component %s)", errs[0], v.ID())
	}
	if err := checkOutputs("", sp.Outputs, v); err != nil {
		return err
	}
	component.ApplyOutputs(steps, outs, sp.Outputs)
	sp.Outputs = component.JobOutputs(v.Outputs, sp.Outputs)
	p.Steps, p.Outputs, p.Component = map[string]job.PipelineStep{}, outs, v.ID()
	for name, st := range steps {
		p.Steps[name] = st.PipelineStep
	}
	if sp.DisplayName == "" {
		sp.DisplayName = v.DisplayName
	}
	return nil
}

// resolveStep replaces one step that names a registered component by the component's step, or
// by its steps for a pipeline component.
func (w *Workspace) resolveStep(ctx context.Context, steps map[string]component.Step, groups map[string]map[string]job.StepRef, name, defaultCompute string) error {
	st := steps[name]
	v, err := w.Components.Resolve(ctx, strings.TrimPrefix(st.Component, "azureml:"))
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return &Error{Kind: e.Kind, Msg: "jobs." + name + ".component: " + e.Msg}
		}
		return err
	}
	values := maps.Clone(st.Spec.Inputs)
	for in := range st.From {
		delete(values, in)
	}
	given := component.Given{Values: values, From: st.From, Params: st.Params}
	if v.Type == component.Pipeline {
		compute := st.Spec.Compute
		if compute == "" {
			compute = defaultCompute
		}
		inlined, outs, errs := component.Inline(name, v.Spec, given, compute)
		if len(errs) > 0 {
			return Invalidf("jobs.%s.%v (component %s)", name, errs[0], v.ID())
		}
		if err := checkOutputs("jobs."+name+".", st.Spec.Outputs, v); err != nil {
			return err
		}
		component.ApplyOutputs(inlined, outs, st.Spec.Outputs) // what the step gives its outputs
		delete(steps, name)
		maps.Copy(steps, inlined)
		groups[name] = outs
		return nil
	}
	if v.Job == nil {
		return Invalidf("jobs.%s.component: component %s has no command", name, v.ID())
	}
	inputs, errs := component.Bind(v.Inputs, given)
	if len(errs) > 0 {
		return Invalidf("jobs.%s.%v (component %s)", name, errs[0], v.ID())
	}
	sp := *v.Job
	overrideStep(&sp, st.Spec)
	sp.Inputs, sp.Outputs = inputs, maps.Clone(v.Outputs)
	if err := checkOutputs("jobs."+name+".", st.Spec.Outputs, v); err != nil {
		return err
	}
	for out, o := range st.Spec.Outputs { // the fields the step gives, on the declared output
		sp.Outputs[out] = component.MergeOutput(v.Outputs[out], o)
	}
	st.Spec, st.Component, st.Deterministic = sp, v.ID(), v.Deterministic
	steps[name] = st
	return nil
}

// checkOutputs refuses the outputs a step (or a pipeline job defined by the component, field
// "") gives that the component v does not declare.
func checkOutputs(field string, given map[string]job.Output, v *component.Version) error {
	for _, out := range slices.Sorted(maps.Keys(given)) {
		if _, ok := v.Outputs[out]; !ok {
			return Invalidf("%soutputs.%s: component %s has no output %s (its outputs: %s)", field, out, v.ID(), out, strings.Join(slices.Sorted(maps.Keys(v.Outputs)), ", "))
		}
	}
	return nil
}

// overrideStep applies what a step sets on top of its component's definition.
func overrideStep(sp *job.Spec, ov job.Spec) {
	if ov.Compute != "" {
		sp.Compute = ov.Compute
	}
	if !reflect.DeepEqual(ov.Environment, job.Environment{}) {
		sp.Environment = ov.Environment
	}
	if len(ov.EnvironmentVariables) > 0 {
		env := maps.Clone(sp.EnvironmentVariables)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, ov.EnvironmentVariables)
		sp.EnvironmentVariables = env
	}
	if ov.Resources.InstanceType != "" || ov.Resources.InstanceCount > 1 {
		sp.Resources = ov.Resources
	}
	if ov.Distribution != nil {
		sp.Distribution = ov.Distribution
	}
	if ov.Limits != (job.Limits{}) {
		sp.Limits = ov.Limits
	}
	if ov.DisplayName != "" {
		sp.DisplayName = ov.DisplayName
	}
	if len(ov.Tags) > 0 {
		sp.Tags = ov.Tags
	}
	if len(ov.Services) > 0 {
		sp.Services = ov.Services
	}
}
