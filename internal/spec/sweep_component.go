package spec

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/job"
)

// componentSpec is a command component file as a sweep's trial uses it.
type componentSpec struct {
	job      job.Spec
	declared map[string]bool // inputs without a default: a value must come from the sweep
	cmd      *yaml.Node
}

// component decodes a `type: command` component file (commandComponent.schema.json).
func (d *decoder) component(root *yaml.Node) componentSpec {
	c := componentSpec{declared: map[string]bool{}}
	s := &c.job
	common := d.jobFields(s)
	fs := fields{
		"type":             func(v *yaml.Node, p string) { d.enum(v, p, "command") },
		"version":          func(v *yaml.Node, p string) { d.str(v, p) },
		"is_deterministic": func(v *yaml.Node, p string) { d.boolean(v, p) },
		"inputs":           func(v *yaml.Node, p string) { s.Inputs = d.componentInputs(v, p, c.declared) },
		"additional_includes": func(v *yaml.Node, p string) {
			d.errorf(v, p, "additional_includes is not supported yet; put the files in the code folder")
		},
	}
	for _, k := range []string{"$schema", "name", "display_name", "description", "tags", "command", "code",
		"environment", "environment_variables", "outputs", "resources", "distribution", "services"} {
		fs[k] = common[k]
	}
	got := d.mapping(root, "", fs)
	switch c.cmd = got["command"]; {
	case c.cmd == nil:
		d.required(nil, "command")
	case strings.TrimSpace(s.Command) == "":
		d.errorf(c.cmd, "command", "must not be empty")
	}
	return c
}

// componentInputs decodes a component's inputs: like a job's, except that an input may leave
// its value to whoever uses the component (no default, no path).
func (d *decoder) componentInputs(n *yaml.Node, path string, declared map[string]bool) map[string]job.Input {
	out := map[string]job.Input{}
	for _, p := range d.entries(n, path) {
		ip := join(path, p.key.Value)
		d.checkName(p.key, ip)
		v := resolve(p.value)
		if v != nil && v.Kind == yaml.MappingNode && lookup(v, "default") == nil && lookup(v, "value") == nil && lookup(v, "path") == nil {
			typ := job.URIFolder
			if t := lookup(v, "type"); t != nil && !isNull(t) {
				typ = d.enum(t, join(ip, "type"), inputTypes...)
			}
			in := job.Input{Type: typ}
			if !isLiteralType(typ) {
				in.Mode = "ro_mount"
			}
			d.mapping(v, ip, fields{"type": nil, "min": nil, "max": nil, "enum": nil,
				"optional":    func(x *yaml.Node, xp string) { in.Optional, _ = d.boolean(x, xp) },
				"description": func(x *yaml.Node, xp string) { in.Description = d.str(x, xp) },
				"mode":        func(x *yaml.Node, xp string) { in.Mode = d.mode(x, xp, typ, "input", inputModes, modelModes) },
			})
			out[p.key.Value], declared[p.key.Value] = in, true
			continue
		}
		if in, ok := d.input(v, ip); ok {
			out[p.key.Value] = in
		}
	}
	return out
}

// bindComponent makes the sweep's trial template from a component: the component's command,
// code, environment and settings; each of its inputs takes the sweep's input of that name, or
// is bound per trial by the search-space parameter of that name, or keeps its default.
func (d *decoder) bindComponent(n *yaml.Node, got map[string]*yaml.Node, s *job.Spec, c componentSpec, file string) {
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
	s.Resources, s.Distribution, s.Services = cj.Resources, cj.Distribution, cj.Services
	s.Inputs, s.Outputs = inputs, outputs
	if len(d.errs) == 0 {
		d.checkComponentCommand(c.cmd, file, s)
	}
}

// checkComponentCommand checks the component's command against the trial's inputs, the
// search-space ones standing in with a sample value; problems name the component file.
func (d *decoder) checkComponentCommand(cmd *yaml.Node, file string, s *job.Spec) {
	sample := *s
	sample.Inputs = map[string]job.Input{}
	for name, in := range s.Inputs {
		sample.Inputs[name] = in
	}
	for name, v := range SampleParams(s.Sweep.Config.Space) {
		sample.Inputs[name] = job.Input{Type: paramType(v), Value: ParamText(v)}
	}
	cd := newDecoder(file, d.baseDir)
	cd.checkCommand(cmd, &sample)
	d.errs = append(d.errs, cd.errs...)
}
