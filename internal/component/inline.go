package component

import (
	"fmt"
	"maps"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// Inline expands a pipeline component used as step `name` of an enclosing graph: each of its
// steps becomes "<name>.<step>" (Group name); with name "" (a pipeline job defined by the
// component, `component:` at its top) its steps keep their names. Its inputs that take the
// component's own inputs get what the enclosing step gives (a value, a step output of the
// enclosing graph, or an input of the enclosing component), else the declared default, else
// nothing when optional; its references to siblings are renamed. It returns the steps and where
// each of the component's outputs now comes from.
func Inline(name string, c Spec, g Given, compute string) (map[string]Step, map[string]job.StepRef, []error) {
	if c.Graph == nil {
		return nil, nil, []error{fmt.Errorf("component %s is not a pipeline component", c.Name)}
	}
	bound, errs := Bind(c.Inputs, g)
	steps := map[string]Step{}
	prefix := ""
	if name != "" {
		prefix = name + "."
	}
	rename := func(r job.StepRef) job.StepRef { return job.StepRef{Step: prefix + r.Step, Output: r.Output} }
	for sname, s := range c.Graph.Steps {
		ns := s
		ns.Spec = s.Spec
		ns.Spec.Inputs = maps.Clone(s.Spec.Inputs)
		ns.From, ns.Params = map[string]job.StepRef{}, map[string]string{}
		for in, r := range s.From {
			ns.From[in] = rename(r)
		}
		ns.Checks = nil
		for _, in := range sortedKeys(s.Params) {
			param := s.Params[in]
			v, isValue := g.Values[param]
			if !isValue && bound[param].Type != "" && g.From[param] == (job.StepRef{}) && g.Params[param] == "" {
				v, isValue = bound[param], true // the component's default, or its optional input left out
			}
			switch {
			case isValue:
				ns.Spec.Inputs[in] = mergeValue(s.Spec.Inputs[in], bound[param], v)
				if decl, ok := s.Checks[in]; ok && (v.Value != "" || v.Path != "") {
					if _, err := Check(decl, v); err != nil {
						errs = append(errs, fmt.Errorf("inputs.%s: %w (step %s reads it as its input %s)", param, err, sname, in))
					}
				}
			case g.From[param] != (job.StepRef{}):
				ns.From[in] = g.From[param]
			case g.Params[param] != "":
				ns.Params[in] = g.Params[param]
				if decl, ok := s.Checks[in]; ok {
					if ns.Checks == nil {
						ns.Checks = map[string]Input{}
					}
					ns.Checks[in] = decl
				}
			default: // not declared by the component: Bind reported it
				delete(ns.Spec.Inputs, in)
			}
		}
		if s.ComputeParam != "" {
			ns.ComputeParam = ""
			switch v, ok := g.Values[s.ComputeParam]; {
			case ok:
				ns.Spec.Compute = ComputeName(v.Value)
			case g.Params[s.ComputeParam] != "":
				ns.ComputeParam = g.Params[s.ComputeParam]
			case bound[s.ComputeParam].Value != "":
				ns.Spec.Compute = ComputeName(bound[s.ComputeParam].Value)
			}
		}
		if ns.Spec.Compute == "" {
			ns.Spec.Compute = compute
		}
		ns.Group = name
		if s.Group != "" {
			ns.Group = prefix + s.Group
		}
		if len(ns.From) == 0 {
			ns.From = nil
		}
		if len(ns.Params) == 0 {
			ns.Params = nil
		}
		steps[prefix+sname] = ns
	}
	outs := map[string]job.StepRef{}
	for o, r := range c.Graph.Outputs {
		outs[o] = rename(r)
	}
	return steps, outs, errs
}

// mergeValue is the input a step gets from a value bound to a parameter: the value, typed as
// the step declared it where both are literals.
func mergeValue(stepDecl, _ job.Input, v job.Input) job.Input {
	if stepDecl.IsLiteral() && v.IsLiteral() {
		stepDecl.Value = v.Value
		stepDecl.Optional = v.Optional && v.Value == ""
		return stepDecl
	}
	if !v.IsLiteral() && stepDecl.Mode != "" && v.Mode == "" {
		v.Mode = stepDecl.Mode
	}
	return v
}

// ComputeName is a compute reference without its azureml: prefix.
func ComputeName(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= len("azureml:") && strings.EqualFold(s[:len("azureml:")], "azureml:") {
		return s[len("azureml:"):]
	}
	return s
}

// Resolve turns a pipeline job's graph into the run's steps: the parameters read the job's own
// inputs, step outputs that read a nested pipeline's outputs are followed to the step that
// writes them, and each step without a compute takes defaultCompute.
func Resolve(g Graph, inputs map[string]job.Input) (map[string]job.PipelineStep, []error) {
	var errs []error
	out := map[string]job.PipelineStep{}
	for _, name := range sortedKeys(g.Steps) {
		s := g.Steps[name]
		ps := s.PipelineStep
		ps.Spec.Inputs = maps.Clone(s.Spec.Inputs)
		for _, in := range sortedKeys(s.Params) {
			param := s.Params[in]
			v, ok := inputs[param]
			if !ok {
				errs = append(errs, fmt.Errorf("jobs.%s.inputs.%s: ${{parent.inputs.%s}} is not an input of the pipeline (its inputs: %s)", name, in, param, listInputs(inputs)))
				continue
			}
			if ps.Spec.Inputs == nil {
				ps.Spec.Inputs = map[string]job.Input{}
			}
			ps.Spec.Inputs[in] = mergeValue(s.Spec.Inputs[in], job.Input{}, v)
		}
		if s.ComputeParam != "" {
			v, ok := inputs[s.ComputeParam]
			if !ok || !v.IsLiteral() {
				errs = append(errs, fmt.Errorf("jobs.%s.compute: ${{parent.inputs.%s}} is not a literal input of the pipeline", name, s.ComputeParam))
			} else {
				ps.Spec.Compute = ComputeName(v.Value)
			}
		}
		out[name] = ps
	}
	return out, errs
}

func listInputs(m map[string]job.Input) string {
	if len(m) == 0 {
		return "none declared"
	}
	return strings.Join(sortedKeys(m), ", ")
}

// Follow rewrites the references to a nested pipeline step's outputs (groups: the step's name
// → its outputs, from Inline) to the steps that write them, in the steps' From and in the
// graph's own outputs.
func Follow(steps map[string]Step, outputs map[string]job.StepRef, groups map[string]map[string]job.StepRef) []error {
	var errs []error
	follow := func(where string, r job.StepRef) job.StepRef {
		outs, ok := groups[r.Step]
		if !ok {
			return r
		}
		to, ok := outs[r.Output]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: the pipeline step %s has no output %s (its outputs: %s)", where, r.Step, r.Output, listRefs(outs)))
			return r
		}
		return to
	}
	for _, name := range sortedKeys(steps) {
		s := steps[name]
		for _, in := range sortedKeys(s.From) {
			s.From[in] = follow("jobs."+name+".inputs."+in, s.From[in])
		}
	}
	for _, o := range sortedKeys(outputs) {
		outputs[o] = follow("outputs."+o, outputs[o])
	}
	return errs
}

func listRefs(m map[string]job.StepRef) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(sortedKeys(m), ", ")
}
