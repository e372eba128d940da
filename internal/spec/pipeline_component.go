package spec

import (
	"maps"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
)

// maxComponentDepth bounds component files that name component files (a pipeline component
// whose steps are components), so that one that names itself is an error, not a hang.
const maxComponentDepth = 8

// stepOverrides are the keys a component step may set on top of the component's own.
var stepOverrides = []string{"compute", "environment", "environment_variables", "resources", "distribution",
	"limits", "display_name", "description", "tags", "services", "identity", "queue_settings", "properties",
	"experiment_name"}

// componentStep decodes a step that uses a component: a file (component: ./train.yml), an
// inline component, or a registered one (azureml:name:version, azureml:name@latest), which the
// server resolves at create. A pipeline component's steps are inlined into g as
// "<name>.<step>". It returns false when nothing was added.
func (d *pipelineDecoder) componentStep(g *component.Graph, groups map[string]map[string]job.StepRef, name string, b stepBindings, pc pipeCtx) bool {
	ov := &job.Spec{Type: "command"}
	common := d.jobs.jobFields(ov)
	var given map[string]job.Input
	var outs map[string]job.Output
	fs := fields{"type": nil, "component": nil,
		"inputs":  func(v *yaml.Node, p string) { given = d.jobs.inputs(v, p) },
		"outputs": func(v *yaml.Node, p string) { outs = d.jobs.outputs(v, p) },
	}
	for _, k := range stepOverrides {
		fs[k] = common[k]
	}
	got := d.mapping(b.node, "", fs)
	givenModes(got["inputs"], given)
	values := map[string]job.Input{}
	for k, v := range given {
		_, from := b.from[k]
		_, param := b.params[k]
		if !from && !param {
			values[k] = v
		}
	}
	cn := resolve(got["component"])
	if cn == nil {
		d.expected(got["component"], "component", "a component file, an inline component or azureml:<name>:<version>")
		return false
	}
	sets := outputSettings(got["outputs"], outs)
	if cn.Kind == yaml.ScalarNode && strings.HasPrefix(strings.ToLower(strings.TrimSpace(cn.Value)), "azureml:") {
		return d.registeredStep(g, name, cn, *ov, given, sets)
	}
	comp, cmd, file, ok := d.stepComponent(cn)
	if !ok {
		return false
	}
	if comp.Type == component.Pipeline {
		compute := ov.Compute
		if compute == "" && b.computeParam == "" {
			compute = pc.compute
		}
		steps, groupOuts, errs := component.Inline(name, comp, component.Given{Values: values, From: b.from, Params: b.params}, compute)
		d.report(b.node, errs)
		component.ApplyOutputs(steps, groupOuts, sets) // outputs: {scores: {mode: upload}} of the step
		maps.Copy(g.Steps, steps)
		groups[name] = groupOuts
		d.checkStepOutputs(got["outputs"], outs, comp, file)
		return true
	}
	inputs, errs := component.Bind(comp.Inputs, component.Given{Values: values, From: b.from, Params: b.params})
	d.report(b.node, errs)
	sp := *comp.Job
	d.override(&sp, ov, got)
	sp.Inputs, sp.Outputs = inputs, maps.Clone(comp.Outputs)
	d.checkStepOutputs(got["outputs"], outs, comp, file)
	for out, o := range sets {
		if decl, declared := comp.Outputs[out]; declared {
			sp.Outputs[out] = component.MergeOutput(decl, o) // what the step gives, on the declared output
		}
	}
	if len(errs) == 0 && pc.values && cmd != nil {
		cd := newDecoder(file, d.baseDir)
		cd.jobs.checkCommand(cmd, &sp)
		d.errs = append(d.errs, cd.errs...)
	}
	if sp.Inputs == nil {
		sp.Inputs = map[string]job.Input{}
	}
	st := component.Step{}
	st.Spec, st.Deterministic = sp, comp.Deterministic
	for in := range b.params {
		if decl, ok := comp.Inputs[in]; ok {
			if st.Checks == nil {
				st.Checks = map[string]component.Input{}
			}
			st.Checks[in] = decl
		}
	}
	if file != d.file {
		st.Component = file
	}
	g.Steps[name] = st
	return true
}

// givenModes empties the mode of each data input the step gives without a `mode:` of its own,
// so that the component's declared mode applies (component.Check).
func givenModes(n *yaml.Node, given map[string]job.Input) {
	for name, in := range given {
		if v := resolve(lookup(n, name)); !in.IsLiteral() && (v == nil || v.Kind != yaml.MappingNode || lookup(v, "mode") == nil) {
			in.Mode = ""
			given[name] = in
		}
	}
}

// registeredStep records a step that names a registered component, with what it gives and
// sets (its outputs' settings sparse, only the fields given: the server puts them on the
// component's declared outputs): the server resolves the component at create
// (controller.resolvePipeline).
func (d *pipelineDecoder) registeredStep(g *component.Graph, name string, cn *yaml.Node, ov job.Spec, given map[string]job.Input, outs map[string]job.Output) bool {
	ref, err := component.Kind.ParseRef(cn.Value, false)
	if err != nil {
		d.errorf(cn, "component", "%v", err)
		return false
	}
	st := component.Step{}
	st.Spec, st.Component, st.Deterministic = ov, "azureml:"+ref.String(), true
	st.Spec.Inputs, st.Spec.Outputs = given, outs
	g.Steps[name] = st
	return true
}

// outputSettings are the outputs' own settings with only the fields the YAML (n, the outputs
// mapping) gives: an empty Type or Mode was not given, an output that is nothing (or a binding
// taken out) gives nothing. component.MergeOutput puts them on what they bind.
func outputSettings(n *yaml.Node, outs map[string]job.Output) map[string]job.Output {
	sets := map[string]job.Output{}
	for name, o := range outs {
		v := resolve(lookup(n, name))
		if v == nil || v.Kind != yaml.MappingNode {
			sets[name] = job.Output{}
			continue
		}
		if t := lookup(v, "type"); t == nil || isNull(t) {
			o.Type = ""
		}
		if m := lookup(v, "mode"); m == nil || isNull(m) {
			o.Mode = ""
		}
		sets[name] = o
	}
	return sets
}

// checkStepOutputs reports the outputs a step names that its component does not declare.
func (d *pipelineDecoder) checkStepOutputs(n *yaml.Node, outs map[string]job.Output, comp component.Spec, file string) {
	for _, out := range keys(outs) {
		if _, declared := comp.Outputs[out]; !declared {
			d.errorf(keyNode(n, out), "outputs."+out, "the component %s has no output %s (its outputs: %s)", file, quote(out), listOrNone(keys(comp.Outputs)))
		}
	}
}

// override applies a component step's own settings over the component's.
func (d *pipelineDecoder) override(sp, ov *job.Spec, got map[string]*yaml.Node) {
	set := func(key string, apply func()) {
		if got[key] != nil {
			apply()
		}
	}
	set("compute", func() { sp.Compute = ov.Compute })
	set("environment", func() { sp.Environment = ov.Environment })
	set("environment_variables", func() {
		env := maps.Clone(sp.EnvironmentVariables)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, ov.EnvironmentVariables)
		sp.EnvironmentVariables = env
	})
	set("resources", func() { sp.Resources = ov.Resources })
	set("distribution", func() { sp.Distribution = ov.Distribution })
	set("limits", func() { sp.Limits = ov.Limits })
	set("display_name", func() { sp.DisplayName = ov.DisplayName })
	set("description", func() { sp.Description = ov.Description })
	set("tags", func() { sp.Tags = ov.Tags })
	set("services", func() { sp.Services = ov.Services })
	set("identity", func() { sp.Identity = ov.Identity })
	set("queue_settings", func() { sp.QueueSettings = ov.QueueSettings })
	set("properties", func() { sp.Properties = ov.Properties })
	if sp.Resources.InstanceCount == 0 {
		sp.Resources.InstanceCount = 1
	}
}

// stepComponent decodes a step's `component:`: an inline component or a component file.
func (d *pipelineDecoder) stepComponent(n *yaml.Node) (component.Spec, *yaml.Node, string, bool) {
	if n.Kind == yaml.MappingNode {
		cd := newDecoder(d.file, d.baseDir)
		cd.prefix, cd.fromSet, cd.depth = join(d.prefix, "component"), d.fromSet, d.depth+1
		d.inherit(cd)
		c, cmd := cd.assets.component(n)
		d.errs, d.warnings = append(d.errs, cd.errs...), append(d.warnings, cd.warnings...)
		return c, cmd, d.file, len(cd.errs) == 0
	}
	return d.componentFile(n, "component", "a component file (component: ./train.yml), an inline component or azureml:<name>:<version>")
}

// componentFile reads and decodes the component file a spec names (relative to the spec's
// directory); its problems name that file.
func (d *pipelineDecoder) componentFile(n *yaml.Node, path, what string) (component.Spec, *yaml.Node, string, bool) {
	ref := strings.TrimSpace(d.str(n, path))
	if ref == "" || isURI(ref) {
		d.expected(n, path, what)
		return component.Spec{}, nil, "", false
	}
	if d.depth >= maxComponentDepth {
		d.errorf(n, path, "components nested more than %d deep (does %s use itself?)", maxComponentDepth, ref)
		return component.Spec{}, nil, "", false
	}
	if base := strings.ToLower(filepath.Base(ref)); base == "flow.dag.yaml" || base == "flow.dag.yml" {
		d.errorf(n, path, "%s is a prompt flow; flows are not supported as components (command and pipeline components are)", ref)
		return component.Spec{}, nil, "", false
	}
	abs, info, ok := d.stat(n, path, ref)
	if !ok {
		return component.Spec{}, nil, "", false
	}
	if info.IsDir() {
		d.errorf(n, path, "%s is a directory; expected a component file", ref)
		return component.Spec{}, nil, "", false
	}
	if !d.confined(n, path, ref, abs) { // confine.go
		return component.Spec{}, nil, "", false
	}
	data, err := readSmall(abs)
	if err != nil {
		d.errorf(n, path, "read %s: %v", ref, unwrapPathError(err))
		return component.Spec{}, nil, "", false
	}
	file := d.relFile(ref)
	cd, root := begin(file, data, filepath.Dir(abs), nil, nil)
	cd.depth = d.depth + 1
	if !d.fromSet[n] { // one given with --set reads inside its own folder
		d.inherit(cd)
	}
	var c component.Spec
	var cmd *yaml.Node
	if root != nil {
		c, cmd = cd.assets.component(root)
	}
	d.errs, d.warnings = append(d.errs, cd.errs...), append(d.warnings, cd.warnings...)
	return c, cmd, file, len(cd.errs) == 0
}
