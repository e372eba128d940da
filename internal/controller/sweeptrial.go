package controller

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
)

// resolveSweepTrial binds a sweep whose trial names a registered command component
// (`trial: azureml:<name>:<version>` or `@latest`): the component's command, code, environment,
// resources and outputs become the trial's, its inputs take their values from the sweep's inputs
// (checked against the declared types, min, max and enum) and from the search space by name
// (each trial's value, bound by spec.TrialSpec), else from their defaults. The reference is
// pinned to the version found, so every trial runs the same component.
func (n *Parents) resolveSweepTrial(ctx context.Context, sp *job.Spec) error {
	c := n.c
	if sp.Sweep == nil || !strings.HasPrefix(strings.ToLower(sp.Sweep.Trial), "azureml:") {
		return nil
	}
	v, err := c.Workspace.Components.Resolve(ctx, sp.Sweep.Trial[len("azureml:"):])
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return &Error{Kind: e.Kind, Msg: "trial: " + e.Msg}
		}
		return err
	}
	if v.Job == nil {
		return invalidf("trial: component %s is a %s component; a sweep's trial is a command component", v.ID(), v.Type)
	}
	params := map[string]string{}
	for name := range sp.Sweep.Config.Space {
		if _, ok := v.Inputs[name]; !ok {
			return invalidf("search_space.%s: the trial's component %s has no input %s to bind (its inputs: %s)",
				name, v.ID(), name, strings.Join(slices.Sorted(maps.Keys(v.Inputs)), ", "))
		}
		params[name] = name
	}
	inputs, errs := component.Bind(v.Inputs, component.Given{Values: sp.Inputs, Params: params})
	if len(errs) > 0 {
		return invalidf("%v (the trial's component %s)", errs[0], v.ID())
	}
	for name := range params {
		delete(inputs, name) // each trial's value, bound by spec.TrialSpec
	}
	outputs := maps.Clone(v.Outputs)
	for name, o := range sp.Outputs {
		if _, ok := v.Outputs[name]; !ok {
			return invalidf("outputs.%s: the trial's component %s has no output %s", name, v.ID(), name)
		}
		outputs[name] = o
	}
	cj := v.Job
	sp.Command, sp.Code, sp.CodeSnapshot, sp.Environment = cj.Command, cj.Code, cj.CodeSnapshot, cj.Environment
	sp.EnvironmentVariables, sp.Resources, sp.Distribution, sp.Services = cj.EnvironmentVariables, cj.Resources, cj.Distribution, cj.Services
	sp.Inputs, sp.Outputs = inputs, outputs
	sp.Sweep.Trial = "azureml:" + v.ID()
	sp.Sweep.ParamInputs = slices.Sorted(maps.Keys(params))
	return nil
}
