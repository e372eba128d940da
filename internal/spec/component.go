package spec

import (
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pattern"
)

// componentName is Azure's rule for component names (commandComponent.schema.json), with the
// - that Azure's own examples use (r-iris-example).
var componentName = pattern.New(`^[a-zA-Z_][a-zA-Z0-9_-]{0,254}$`)

// componentKeys are the keys --set may create in a component file.
var componentKeys = []string{"name", "version", "display_name", "description", "tags.*", "is_deterministic",
	"command", "code", "environment", "environment_variables.*", "resources.instance_count"}

// ParseComponentFile reads a component file (`type: command` or `type: pipeline`) for
// component create, applying --set overrides. Relative paths resolve against the file's
// directory and are returned absolute. The error, when not nil, is an ErrorList.
func ParseComponentFile(file string, sets []string, opts ...FileOption) (*component.Spec, []string, error) {
	data, err := readSpec(file)
	if err != nil {
		return nil, nil, err
	}
	d, root := begin(file, data, filepath.Dir(file), sets, componentKeys, opts...)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	c, _ := d.assets.component(root)
	return result(d, &c)
}

// component decodes a component file's mapping: a command component (its step in Job) or a
// pipeline component (its steps in Graph). It also returns the command's node, for checks
// that name the component file.
func (d *assetDecoder) component(root *yaml.Node) (component.Spec, *yaml.Node) {
	c := component.Spec{Type: component.Command, Deterministic: true}
	if sc := lookup(root, "$schema"); sc != nil && strings.Contains(strings.ToLower(sc.Value), "/promptflow/") {
		d.errorf(sc, "$schema", "a prompt flow file; flows are not supported as components (command and pipeline components are)")
		return c, nil
	}
	if t := lookup(root, "type"); t != nil && !isNull(t) {
		switch typ := d.enum(t, "type", "command", "pipeline", "parallel", "spark", "automl", "flow"); typ {
		case "command", "":
		case "pipeline":
			c.Type = component.Pipeline
		default:
			d.errorf(t, "type", "%s components are not supported (command and pipeline components are)", typ)
			return c, nil
		}
	}
	fs := fields{
		"$schema":          nil,
		"type":             nil,
		"name":             func(v *yaml.Node, p string) { c.Name = d.componentName(v, p) },
		"version":          func(v *yaml.Node, p string) { c.Version = d.assetVersion(v, p, component.Kind.ParseVersion) },
		"display_name":     func(v *yaml.Node, p string) { c.DisplayName = d.str(v, p) },
		"description":      func(v *yaml.Node, p string) { c.Description = d.str(v, p) },
		"tags":             func(v *yaml.Node, p string) { c.Tags = d.stringMap(v, p) },
		"is_deterministic": func(v *yaml.Node, p string) { c.Deterministic, _ = d.boolean(v, p) },
		"inputs":           func(v *yaml.Node, p string) { c.Inputs = d.componentInputs(v, p) },
		"outputs":          func(v *yaml.Node, p string) { c.Outputs = d.jobs.outputs(v, p) },
	}
	fs["additional_includes"] = nil // a command component's: decoded below
	if c.Type == component.Pipeline {
		fs["additional_includes"] = func(v *yaml.Node, p string) {
			d.errorf(v, p, "a command component's field; list it in the components of the steps that need the files")
		}
		fs["jobs"] = nil
		fs["settings"] = func(v *yaml.Node, p string) { d.pipelines.pipelineSettings(v, p) }
		got := d.mapping(root, "", fs)
		if got["jobs"] == nil {
			d.required(nil, "jobs")
			return c, nil
		}
		pc := pipeCtx{params: c.Inputs, outputs: c.Outputs, outputSets: outputSettings(got["outputs"], c.Outputs)}
		g := d.pipelines.graph(got["jobs"], pc)
		c.Graph = &g
		return c, nil
	}
	s := &job.Spec{Type: "command"}
	common := d.jobs.jobFields(s)
	for _, k := range []string{"command", "code", "environment", "environment_variables", "resources",
		"distribution", "services"} {
		fs[k] = common[k]
	}
	got := d.mapping(root, "", fs)
	if inc := got["additional_includes"]; inc != nil && !isNull(inc) {
		errs := len(d.errs)
		s.AdditionalIncludes = d.jobs.additionalIncludes(inc, "additional_includes") // includes.go
		if len(d.errs) == errs {
			d.jobs.checkIncludes(inc, "additional_includes", s.Code, s.AdditionalIncludes)
		}
	}
	cmd := got["command"]
	switch {
	case cmd == nil:
		d.required(nil, "command")
	case !isString(cmd): // text reported it
	case strings.TrimSpace(s.Command) == "":
		d.errorf(cmd, "command", "must not be empty")
	case len(d.errs) == 0:
		d.checkComponentRefs(cmd, c, s)
	}
	if s.Resources.InstanceCount == 0 {
		s.Resources.InstanceCount = 1
	}
	c.Job = s
	return c, cmd
}

// checkComponentRefs checks the command's references against the declared inputs and
// outputs, standing in for values it does not know.
func (d *assetDecoder) checkComponentRefs(cmd *yaml.Node, c component.Spec, s *job.Spec) {
	sample := *s
	sample.Inputs, sample.Outputs = map[string]job.Input{}, c.Outputs
	for name, in := range c.Inputs {
		sample.Inputs[name] = standIn(in)
	}
	d.jobs.checkCommand(cmd, &sample)
}

// standIn is a value of the declared input's kind, for checks before any value is known.
func standIn(in component.Input) job.Input {
	v := in.Input
	switch {
	case in.HasDefault || v.Optional:
	case v.Type == job.InputInteger:
		v.Value = "1"
	case v.Type == job.InputNumber:
		v.Value = "0.5"
	case v.Type == job.InputBoolean:
		v.Value = "true"
	case v.Type == job.InputString:
		v.Value = "value"
	}
	return v
}

func (d *assetDecoder) componentName(n *yaml.Node, path string) string {
	s := d.str(n, path)
	if s != "" && !componentName.MatchString(s) {
		d.expected(n, path, "a name of letters, digits, _ and - starting with a letter or _ (at most 255)")
	}
	return s
}

// componentInputs decodes a component's declared inputs: a type, and optionally a default,
// optional, min, max, enum, description and mode. A literal shorthand (`lr: 0.1`) declares
// an input of its type with that default.
func (d *assetDecoder) componentInputs(n *yaml.Node, path string) map[string]component.Input {
	return declared(d.decoder, n, path, func(v *yaml.Node, ip string) (component.Input, bool) {
		if v == nil || v.Kind != yaml.MappingNode {
			in, ok := d.jobs.input(v, ip)
			return component.Input{Input: in, HasDefault: true}, ok
		}
		return d.componentInput(v, ip)
	})
}

// componentInput decodes one declared input object.
func (d *assetDecoder) componentInput(v *yaml.Node, path string) (component.Input, bool) {
	errs := len(d.errs)
	typ := job.URIFolder
	if t := lookup(v, "type"); t != nil && !isNull(t) {
		switch {
		case d.jobs.legacyPath(t, join(path, "type")): // inputs.go
			typ = d.jobs.pathType(lookup(v, "default"))
		default:
			if typ = d.enum(t, join(path, "type"), inputTypes...); typ == "" {
				return component.Input{}, false
			}
		}
	}
	// Mode stays empty unless declared: a declared mode is the one a step gets when it gives
	// none of its own (Azure's rule), and ro_mount is the default only after that.
	in := component.Input{Input: job.Input{Type: typ}}
	bound := func(x *yaml.Node, xp string) *float64 {
		if !isLiteralType(typ) || typ == job.InputString || typ == job.InputBoolean {
			d.errorf(x, xp, "only allowed for integer and number inputs")
			return nil
		}
		f, ok := d.number(x, xp)
		if !ok {
			return nil
		}
		return &f
	}
	got := d.mapping(v, path, fields{"type": nil, "default": nil, "value": nil, "path": nil,
		"optional":    func(x *yaml.Node, xp string) { in.Optional, _ = d.boolean(x, xp) },
		"description": func(x *yaml.Node, xp string) { in.Description = d.str(x, xp) },
		"mode":        func(x *yaml.Node, xp string) { in.Mode = d.jobs.mode(x, xp, typ, "input", inputModes, modelModes) },
		"datastore":   func(x *yaml.Node, xp string) { in.Datastore = d.str(x, xp) },
		"min":         func(x *yaml.Node, xp string) { in.Min = bound(x, xp) },
		"max":         func(x *yaml.Node, xp string) { in.Max = bound(x, xp) },
		"enum":        func(x *yaml.Node, xp string) { in.Enum = d.enumValues(x, xp, typ) },
	})
	for _, key := range []string{"default", "value", "path"} {
		x := got[key]
		if x == nil || isNull(x) {
			continue
		}
		xp := join(path, key)
		if isLiteralType(typ) {
			if key == "path" {
				d.errorf(x, xp, "a %s input takes a default, not a path", typ)
				continue
			}
			text, ok := d.jobs.literal(x, xp, typ)
			if !ok {
				continue
			}
			in.Value, in.HasDefault = text, true
			if _, err := component.Check(in, job.Input{Type: typ, Value: text}); err != nil {
				d.errorf(x, xp, "%v", err)
			}
			continue
		}
		in.Path, in.HasDefault = d.jobs.dataPath(x, xp, typ), true
	}
	return in, len(d.errs) == errs
}

// enumValues decodes an input's enum list, each value of the input's type.
func (d *assetDecoder) enumValues(n *yaml.Node, path, typ string) []string {
	var out []string
	for ip, c := range d.list(n, path, "a list") {
		if text, ok := d.jobs.literal(resolve(c), ip, typ); ok {
			out = append(out, text)
		}
	}
	return out
}
