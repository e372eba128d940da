package spec

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
)

// componentSpec is a command component file as a sweep's trial uses it.
type componentSpec struct {
	job      job.Spec
	declared map[string]bool // inputs without a default: a value must come from the sweep
	cmd      *yaml.Node
}

// trialComponent is a command component (component.go) as a sweep's trial uses it.
func (d *sweepDecoder) trialComponent(c component.Spec, cmd, at *yaml.Node) componentSpec {
	out := componentSpec{declared: map[string]bool{}, cmd: cmd}
	if c.Type != component.Command {
		d.errorf(at, "trial", "a sweep's trial must be a command component, got a %s component", c.Type)
		return out
	}
	if c.Job != nil {
		out.job = *c.Job
	}
	out.job.Inputs = map[string]job.Input{}
	out.job.Outputs = c.Outputs
	for name, in := range c.Inputs {
		if !in.IsLiteral() && in.Mode == "" {
			in.Mode = "ro_mount"
		}
		out.job.Inputs[name], out.declared[name] = in.Input, !in.HasDefault
	}
	return out
}

// bindComponent makes the sweep's trial template from a component: the component's command,
// code, environment and settings; each of its inputs takes the sweep's input of that name, or
// is bound per trial by the search-space parameter of that name, or keeps its default.
func (d *sweepDecoder) bindComponent(n *yaml.Node, got map[string]*yaml.Node, s *job.Spec, c componentSpec, file string) {
	cj := c.job
	space := s.Sweep.Config.Space
	inputs := map[string]job.Input{}
	for _, name := range keys(cj.Inputs) {
		in := cj.Inputs[name]
		_, fromSpace := space[name]
		given, fromSweep := s.Inputs[name]
		switch {
		case fromSpace:
			s.Sweep.ParamInputs = append(s.Sweep.ParamInputs, name)
			continue
		case fromSweep && given.IsLiteral() && in.IsLiteral():
			in.Value = given.Value
		case fromSweep:
			in = given
		case c.declared[name] && !in.Optional:
			d.errorf(n, "trial", "input %s of %s has no default: give inputs.%s or search_space.%s", quote(name), file, name, name)
			continue
		case c.declared[name]:
			continue
		}
		inputs[name] = in
	}
	for _, name := range keys(s.Inputs) {
		if _, ok := cj.Inputs[name]; !ok {
			d.errorf(keyNode(got["inputs"], name), "inputs."+name, "the trial %s has no input %s (its inputs: %s)", file, quote(name), listOrNone(keys(cj.Inputs)))
		}
	}
	for _, name := range keys(space) {
		if _, ok := cj.Inputs[name]; !ok {
			d.errorf(keyNode(got["search_space"], name), "search_space."+name, "the trial %s has no input %s to bind (its inputs: %s)", file, quote(name), listOrNone(keys(cj.Inputs)))
		}
	}
	outputs := map[string]job.Output{}
	for name, o := range cj.Outputs {
		if mine, ok := s.Outputs[name]; ok && !isNull(lookup(got["outputs"], name)) {
			o = mine
		}
		outputs[name] = o
	}
	for _, name := range keys(s.Outputs) {
		if _, ok := cj.Outputs[name]; !ok {
			d.errorf(keyNode(got["outputs"], name), "outputs."+name, "the trial %s has no output %s", file, quote(name))
		}
	}
	slices.Sort(s.Sweep.ParamInputs)
	s.Command, s.Code, s.Environment, s.EnvironmentVariables = cj.Command, cj.Code, cj.Environment, cj.EnvironmentVariables
	s.AdditionalIncludes = cj.AdditionalIncludes
	s.Resources, s.Distribution, s.Services = cj.Resources, cj.Distribution, cj.Services
	s.Inputs, s.Outputs = inputs, outputs
	if len(d.errs) == 0 {
		d.checkComponentCommand(c.cmd, file, s)
	}
}

// checkComponentCommand checks the component's command against the trial's inputs, the
// search-space ones standing in with a sample value; problems name the component file.
func (d *sweepDecoder) checkComponentCommand(cmd *yaml.Node, file string, s *job.Spec) {
	sample := *s
	sample.Inputs = map[string]job.Input{}
	for name, in := range s.Inputs {
		sample.Inputs[name] = in
	}
	for name, v := range SampleParams(s.Sweep.Config.Space) {
		sample.Inputs[name] = job.Input{Type: paramType(v), Value: ParamText(v)}
	}
	cd := newDecoder(file, d.baseDir)
	cd.jobs.checkCommand(cmd, &sample)
	d.errs = append(d.errs, cd.errs...)
}
