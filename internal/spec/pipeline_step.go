package spec

import (
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pattern"
)

// pipeCtx is what a pipeline's steps may bind to: the pipeline's own inputs (values in a
// pipeline job, declarations in a pipeline component), its outputs and its default compute.
type pipeCtx struct {
	params  map[string]component.Input
	outputs map[string]job.Output
	// outputSets are the outputs' own settings, only the fields given (outputSettings): what a
	// step output bound to one takes (component.ApplyOutputs).
	outputSets map[string]job.Output
	compute    string
	// values says the params hold the values (a pipeline job): a step reading one gets the
	// value itself, checked against what the step declares. In a pipeline component the
	// binding is kept (Step.Params) until the component is used.
	values bool
}

var (
	stepName = pattern.New(`^[A-Za-z_][A-Za-z0-9_-]{0,254}$`)
	// parentRef is a value that is exactly one ${{parent...}} expression.
	parentRef = pattern.New(`^\s*\$\{\{\s*parent\.([A-Za-z0-9_.-]+)\s*\}\}\s*$`)
)

// graph decodes a pipeline's `jobs` into its flat steps (nested pipeline components inlined)
// and the producers of the pipeline's outputs.
func (d *pipelineDecoder) graph(n *yaml.Node, pc pipeCtx) component.Graph {
	g := component.Graph{Steps: map[string]component.Step{}, Outputs: map[string]job.StepRef{}}
	groups := map[string]map[string]job.StepRef{}
	pairs := d.entries(n, "jobs")
	if len(pairs) == 0 && n.Kind == yaml.MappingNode {
		d.errorf(n, "jobs", "a pipeline needs at least one step")
	}
	for _, p := range pairs {
		name := p.key.Value
		if !stepName.MatchString(name) {
			d.errorf(p.key, "jobs."+name, "step name %s must start with a letter or _ and hold only letters, digits, _ and -", quote(name))
			continue
		}
		d.step(&g, groups, name, resolve(p.value), pc)
	}
	d.report(n, component.Follow(g.Steps, g.Outputs, groups))
	component.ApplyOutputs(g.Steps, g.Outputs, pc.outputSets)
	return g
}

// stepBindings are a step's ${{parent...}} bindings, taken out of its YAML; node is the step
// with a stand-in in each binding's place, so that the decoders of whole jobs read it.
type stepBindings struct {
	node         *yaml.Node
	params       map[string]string      // input → the pipeline's input
	from         map[string]job.StepRef // input → another step's output
	outputs      map[string]string      // output → the pipeline's output
	computeParam string
}

// step decodes one step and adds it (or, for a pipeline component, its steps) to g.
func (d *pipelineDecoder) step(g *component.Graph, groups map[string]map[string]job.StepRef, name string, n *yaml.Node, pc pipeCtx) {
	path := "jobs." + name
	if n == nil || n.Kind != yaml.MappingNode {
		d.expected(n, path, "a step (a mapping)")
		return
	}
	sd := newDecoder(d.file, d.baseDir)
	sd.prefix, sd.fromSet, sd.depth = path, d.fromSet, d.depth
	d.inherit(sd)
	defer func() { d.errs, d.warnings = append(d.errs, sd.errs...), append(d.warnings, sd.warnings...) }()
	b := sd.pipelines.bindings(n, pc)
	typ := "command"
	if t := lookup(n, "type"); t != nil && !isNull(t) {
		typ = sd.enum(t, "type", "command", "pipeline", "parallel", "sweep", "spark", "automl", "flow")
	}
	var st component.Step
	switch {
	case lookup(n, "component") != nil:
		if !sd.pipelines.componentStep(g, groups, name, b, pc) {
			return
		}
		st = g.Steps[name]
	case typ == "command":
		s := &job.Spec{Type: "command"}
		fs := sd.jobs.jobFields(s)
		got := sd.mapping(b.node, "", fs)
		sd.jobs.checkJob(b.node, got, s)
		st.Spec = *s
	case typ == "parallel":
		st.Spec = *sd.parallel.parallelJob(b.node)
	case typ == "sweep":
		st.Spec = *sd.sweeps.sweepJob(b.node)
	case typ == "":
		return
	default:
		sd.errorf(lookup(n, "type"), "type", "%s steps are not supported (command, parallel and sweep steps, and command or pipeline components, are)", typ)
		return
	}
	if _, inlined := groups[name]; inlined {
		d.bindOutputs(g, name, b, pc)
		return
	}
	st.Deterministic = st.Deterministic || st.Component == ""
	sd.pipelines.finishStep(&st, b, pc)
	g.Steps[name] = st
	d.bindOutputs(g, name, b, pc)
}

// finishStep puts the bindings into a decoded step: inputs read from other steps lose their
// stand-in path, parameters are recorded, and the compute is defaulted.
func (d *pipelineDecoder) finishStep(st *component.Step, b stepBindings, pc pipeCtx) {
	for in, ref := range b.from {
		if st.From == nil {
			st.From = map[string]job.StepRef{}
		}
		st.From[in] = ref
		if v, ok := st.Spec.Inputs[in]; ok {
			v.Path, v.Value = "", ""
			st.Spec.Inputs[in] = v
		}
	}
	if len(b.params) > 0 {
		st.Params = b.params
	}
	for in := range b.params {
		if v, ok := st.Spec.Inputs[in]; ok && !v.IsLiteral() {
			v.Path = ""
			st.Spec.Inputs[in] = v
		}
	}
	st.ComputeParam = b.computeParam
	if st.Spec.Compute == "" && b.computeParam == "" {
		st.Spec.Compute = pc.compute
	}
}

// bindOutputs records the step's outputs that are the pipeline's (${{parent.outputs.y}}).
func (d *pipelineDecoder) bindOutputs(g *component.Graph, name string, b stepBindings, pc pipeCtx) {
	for out, parent := range b.outputs {
		if prev, dup := g.Outputs[parent]; dup {
			d.errorf(b.node, "jobs."+name+".outputs."+out, "${{parent.outputs.%s}} is already written by jobs.%s.outputs.%s", parent, prev.Step, prev.Output)
			continue
		}
		g.Outputs[parent] = job.StepRef{Step: name, Output: out}
	}
}

// bindings takes the ${{parent...}} bindings out of a step's inputs, outputs and compute.
func (d *pipelineDecoder) bindings(n *yaml.Node, pc pipeCtx) stepBindings {
	b := stepBindings{node: shallowCopy(n), params: map[string]string{}, from: map[string]job.StepRef{}, outputs: map[string]string{}}
	for i := 0; i+1 < len(b.node.Content); i += 2 {
		key, v := b.node.Content[i].Value, resolve(b.node.Content[i+1])
		switch {
		case key == "inputs" && v != nil && v.Kind == yaml.MappingNode:
			b.node.Content[i+1] = d.inputBindings(v, pc, &b)
		case key == "outputs" && v != nil && v.Kind == yaml.MappingNode:
			b.node.Content[i+1] = d.outputBindings(v, pc, &b)
		case key == "compute" && v != nil && v.Kind == yaml.ScalarNode && parentRef.MatchString(v.Value):
			expr := parentRef.FindStringSubmatch(v.Value)[1]
			param, ok := strings.CutPrefix(expr, "inputs.")
			in, known := pc.params[param]
			switch {
			case !ok || !known:
				d.errorf(v, "compute", "expected ${{parent.inputs.<name>}} naming an input of the pipeline (its inputs: %s)", listOrNone(keys(pc.params)))
			case pc.values && in.IsLiteral():
				b.node.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: in.Value, Line: v.Line}
			case pc.values:
				d.errorf(v, "compute", "${{parent.inputs.%s}} is %s data, not a compute name", param, in.Type)
			default:
				b.computeParam = param
				b.node.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: v.Line}
			}
		}
	}
	return b
}

// inputBindings returns a copy of a step's inputs with each binding replaced by a stand-in:
// the pipeline's value itself in a pipeline job, else a value of the declared kind.
func (d *pipelineDecoder) inputBindings(n *yaml.Node, pc pipeCtx, b *stepBindings) *yaml.Node {
	out := shallowCopy(n)
	for i := 0; i+1 < len(out.Content); i += 2 {
		name, v := out.Content[i].Value, resolve(out.Content[i+1])
		ip := "inputs." + name
		holder, expr := v, ""
		switch {
		case v == nil:
			continue
		case v.Kind == yaml.ScalarNode && parentRef.MatchString(v.Value):
			expr = parentRef.FindStringSubmatch(v.Value)[1]
		case v.Kind == yaml.ScalarNode && strings.Contains(v.Value, "${{parent."):
			d.errorf(v, ip, "a binding must be the whole value (${{parent.inputs.<name>}} or ${{parent.jobs.<step>.outputs.<name>}})")
			continue
		case v.Kind == yaml.MappingNode:
			p := lookup(v, "path")
			if p == nil || p.Kind != yaml.ScalarNode || !parentRef.MatchString(p.Value) {
				continue
			}
			expr = parentRef.FindStringSubmatch(p.Value)[1]
		default:
			continue
		}
		out.Content[i+1] = d.inputStandIn(holder, ip, expr, name, pc, b)
	}
	return out
}

// inputStandIn records one input binding and returns the node that takes its place.
func (d *pipelineDecoder) inputStandIn(v *yaml.Node, ip, expr, name string, pc pipeCtx, b *stepBindings) *yaml.Node {
	parts := strings.Split(expr, ".")
	switch {
	case len(parts) == 2 && parts[0] == "inputs":
		in, ok := pc.params[parts[1]]
		if !ok {
			d.errorf(v, ip, "${{parent.%s}} is not an input of the pipeline (its inputs: %s)", expr, listOrNone(keys(pc.params)))
			return nullNode(v)
		}
		if !pc.values {
			b.params[name] = parts[1]
			in = component.Input{Input: standIn(in)}
			if !in.IsLiteral() && in.Path == "" {
				in.Path = "azureml://jobs/parent/inputs/" + parts[1] // a stand-in, replaced where the component is used
			}
		}
		return valueNode(v, in.Input)
	case len(parts) == 4 && parts[0] == "jobs" && parts[2] == "outputs":
		b.from[name] = job.StepRef{Step: parts[1], Output: parts[3]}
		return valueNode(v, job.Input{Type: job.URIFolder, Path: "azureml://jobs/" + parts[1] + "/outputs/" + parts[3]})
	case len(parts) == 2 && parts[0] == "outputs":
		d.errorf(v, ip, "${{parent.%s}} is an output of the pipeline; an input reads ${{parent.inputs.<name>}} or ${{parent.jobs.<step>.outputs.<name>}}", expr)
	default:
		d.errorf(v, ip, "unknown binding ${{parent.%s}}; expected ${{parent.inputs.<name>}} or ${{parent.jobs.<step>.outputs.<name>}}", expr)
	}
	return nullNode(v)
}

// valueNode is the YAML that decodes to in, keeping the type and mode the step's own input
// object (orig) gives.
func valueNode(orig *yaml.Node, in job.Input) *yaml.Node {
	if in.IsLiteral() && orig.Kind == yaml.ScalarNode {
		tag := map[string]string{job.InputInteger: "!!int", job.InputNumber: "!!float", job.InputBoolean: "!!bool"}[in.Type]
		if tag == "" || in.Value == "" {
			tag = "!!str"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: in.Value, Line: orig.Line, Column: orig.Column}
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: orig.Line, Column: orig.Column}
	add := func(k, v string) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: orig.Line},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: orig.Line})
	}
	given := map[string]bool{}
	if orig.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(orig.Content); i += 2 {
			if k := orig.Content[i].Value; k != "path" {
				given[k] = true
				m.Content = append(m.Content, orig.Content[i], orig.Content[i+1])
			}
		}
	}
	if !given["type"] {
		add("type", in.Type)
	}
	switch {
	case in.IsLiteral() && !given["default"] && !given["value"]:
		add("default", in.Value)
	case in.IsLiteral():
	case in.Path != "":
		add("path", in.Path)
	default:
		add("optional", "true")
	}
	return m
}

func nullNode(orig *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "unbound", Line: orig.Line}
}

// outputBindings returns a copy of a step's outputs with each ${{parent.outputs.y}} taken out:
// a whole value becomes an empty output, the path of an output object is left out of it (the
// object's other fields stay the step's own); either way the step's output is bound to the
// pipeline's.
func (d *pipelineDecoder) outputBindings(n *yaml.Node, pc pipeCtx, b *stepBindings) *yaml.Node {
	out := shallowCopy(n)
	for i := 0; i+1 < len(out.Content); i += 2 {
		name, v := out.Content[i].Value, resolve(out.Content[i+1])
		if v != nil && v.Kind == yaml.MappingNode {
			out.Content[i+1] = d.outputPathBinding(v, name, pc, b)
			continue
		}
		if v == nil || v.Kind != yaml.ScalarNode || isNull(v) {
			continue
		}
		d.bindParentOutput(v, "outputs."+name, name, "${{parent.outputs.<name>}}, an output object or nothing", pc, b)
		out.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: v.Line}
	}
	return out
}

// bindParentOutput binds step output name to the pipeline output that v, at path, names as
// ${{parent.outputs.<name>}}; else it reports that v is not one (expected says what may be
// there) or names no output of the pipeline.
func (d *pipelineDecoder) bindParentOutput(v *yaml.Node, path, name, expected string, pc pipeCtx, b *stepBindings) {
	m := parentRef.FindStringSubmatch(v.Value)
	parent, ok := "", false
	if m != nil {
		parent, ok = strings.CutPrefix(m[1], "outputs.")
	}
	switch _, known := pc.outputs[parent]; {
	case !ok:
		d.errorf(v, path, "expected %s", expected)
	case !known:
		d.errorf(v, path, "${{parent.outputs.%s}} is not an output of the pipeline (its outputs: %s)", parent, listOrNone(keys(pc.outputs)))
	default:
		b.outputs[name] = parent
	}
}

// outputPathBinding takes a ${{parent.outputs.y}} out of an output object's path (Azure's
// batch pipeline components write `scores: {mode: upload, path: ${{parent.outputs.scores}}}`)
// and returns the object without it.
func (d *pipelineDecoder) outputPathBinding(v *yaml.Node, name string, pc pipeCtx, b *stepBindings) *yaml.Node {
	i := keyIndex(v, "path")
	if i < 0 {
		return v
	}
	p := resolve(v.Content[i+1])
	if p == nil || p.Kind != yaml.ScalarNode || !strings.Contains(p.Value, "${{parent.") {
		return v
	}
	d.bindParentOutput(p, "outputs."+name+".path", name, "${{parent.outputs.<name>}} (the whole value) or an azureml://datastores/<datastore>/paths/<path> URI", pc, b)
	c := shallowCopy(v)
	c.Content = append(c.Content[:i:i], c.Content[i+2:]...)
	return c
}

func shallowCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = append([]*yaml.Node(nil), n.Content...)
	return &c
}

// relFile is a file named in the spec as the messages show it: relative to the spec's own
// directory as the user named the spec.
func (d *pipelineDecoder) relFile(ref string) string {
	if filepath.IsAbs(ref) {
		return ref
	}
	return filepath.Join(filepath.Dir(d.file), ref)
}
