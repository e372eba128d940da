package spec

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
)

// A pipeline job may be defined by a pipeline component instead of its own jobs, as Azure's
// batch pipeline examples write it (pipeline-job.yml):
//
//	type: pipeline
//	compute: batch-cluster
//	component: pipeline.yml            # or azureml:batch_scoring@latest, or an inline one
//	inputs: {input_data: {type: uri_folder, path: data}, score_mode: append}
//	outputs: {scores: {mode: upload}}
//
// The job's inputs are the values of the component's inputs, its outputs settings of the
// component's outputs (given to the steps that write them), its settings and compute the steps'
// defaults. The component's steps are the job's steps, under their own names.

// topComponentWhat is what `component:` of a pipeline job takes, for messages.
const topComponentWhat = "a pipeline component file (component: ./pipeline.yml), an inline one or azureml:<name>@latest"

// componentPipeline decodes the component of a pipeline job into its graph, and the job's
// outputs into every output of the component. done says there is nothing more to decode here:
// a registered component (resolved by the workspace at create, s.Pipeline.Component) or an
// error.
func (d *pipelineDecoder) componentPipeline(s *job.Spec, got map[string]*yaml.Node) (g component.Graph, done bool) {
	cn := resolve(got["component"])
	if got["jobs"] != nil {
		d.errorf(got["jobs"], "jobs", "give jobs or component, not both")
		return g, true
	}
	sets := outputSettings(got["outputs"], s.Outputs)
	if cn != nil && cn.Kind == yaml.ScalarNode && strings.HasPrefix(strings.ToLower(strings.TrimSpace(cn.Value)), "azureml:") {
		ref, err := component.Kind.ParseRef(cn.Value, false)
		if err != nil {
			d.errorf(cn, "component", "%v", err)
			return g, true
		}
		s.Pipeline.Component = "azureml:" + ref.String()
		s.Outputs = sets // put on the component's outputs by the workspace, once it has it
		return g, true
	}
	var comp component.Spec
	var file string
	var ok bool
	if cn != nil && cn.Kind == yaml.MappingNode {
		comp, _, file, ok = d.stepComponent(cn)
	} else {
		comp, _, file, ok = d.componentFile(cn, "component", topComponentWhat)
	}
	if !ok {
		return g, true
	}
	if comp.Type != component.Pipeline {
		d.errorf(cn, "component", "%s is a %s component; a pipeline job's component is a pipeline component (type: pipeline), or give jobs", file, comp.Type)
		return g, true
	}
	steps, outs, errs := component.Inline("", comp, component.Given{Values: s.Inputs}, s.Pipeline.Settings.DefaultCompute)
	at := got["inputs"]
	if at == nil {
		at = cn
	}
	d.report(at, errs)
	for _, name := range keys(sets) {
		if _, declared := comp.Outputs[name]; !declared {
			d.errorf(keyNode(got["outputs"], name), "outputs."+name, "the component %s has no output %s (its outputs: %s)", file, quote(name), listOrNone(keys(comp.Outputs)))
		}
	}
	component.ApplyOutputs(steps, outs, sets)
	s.Outputs = component.JobOutputs(comp.Outputs, sets)
	if s.DisplayName == "" {
		s.DisplayName = comp.DisplayName
	}
	if s.Description == "" {
		s.Description = comp.Description
	}
	if file != d.file {
		s.Pipeline.Component = file
	}
	return component.Graph{Steps: steps, Outputs: outs}, false
}
