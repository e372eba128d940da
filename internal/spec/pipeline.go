package spec

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pipeline"
)

// pipelineKeys are the keys --set may create in a pipeline job.
var pipelineKeys = append([]string{
	"settings.default_compute", "settings.default_datastore", "settings.continue_on_step_failure",
	"settings.force_rerun", "jobs.{}.component",
}, prefixed("jobs.{}.", jobKeys)...)

// Registered reports whether a step still names a registered component (azureml:name:version
// or azureml:name@latest) that the server resolves when the pipeline is created.
func Registered(s job.PipelineStep) bool {
	return strings.HasPrefix(s.Component, "azureml:")
}

// pipelineJob decodes a `type: pipeline` job: its settings, inputs and outputs, and its steps
// flattened into s.Pipeline (nested pipeline components inlined, every input bound except
// those read from another step's output). Its steps are its jobs, or the pipeline component
// named by `component:` (pipeline_top.go).
func (d *pipelineDecoder) pipelineJob(root *yaml.Node) *job.Spec {
	s := &job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{}}
	common := d.jobs.jobFields(s)
	fs := fields{"jobs": nil, "component": nil, "settings": func(v *yaml.Node, p string) { s.Pipeline.Settings = d.pipelineSettings(v, p) }}
	for _, k := range []string{"$schema", "type", "name", "display_name", "experiment_name", "description",
		"tags", "properties", "inputs", "outputs", "identity", "compute", "status", "creation_context", "id"} {
		fs[k] = common[k]
	}
	got := d.mapping(root, "", fs)
	set := &s.Pipeline.Settings
	if set.DefaultCompute == "" {
		set.DefaultCompute = s.Compute // a top-level compute is the steps' default, as Azure reads it
	}
	if s.ExperimentName == "" {
		s.ExperimentName = defaultExperiment(d.baseDir)
	}
	errs := len(d.errs)
	var g component.Graph
	var at *yaml.Node // where the steps' problems are reported
	switch jobs := got["jobs"]; {
	case got["component"] != nil:
		var done bool
		if g, done = d.componentPipeline(s, got); done { // pipeline_top.go
			return s
		}
		at = got["component"]
	case jobs == nil:
		d.required(nil, "jobs")
		return s
	default:
		params := map[string]component.Input{}
		for name, in := range s.Inputs {
			params[name] = component.Input{Input: in, HasDefault: true}
		}
		sets := outputSettings(got["outputs"], s.Outputs)
		g = d.graph(jobs, pipeCtx{params: params, outputs: s.Outputs, outputSets: sets, compute: set.DefaultCompute, values: true})
		at = jobs
	}
	steps, problems := component.Resolve(g, s.Inputs)
	d.report(at, problems)
	s.Pipeline.Steps, s.Pipeline.Outputs = steps, g.Outputs
	if len(s.Pipeline.Outputs) == 0 {
		s.Pipeline.Outputs = nil
	}
	for name := range s.Outputs {
		if _, ok := g.Outputs[name]; !ok {
			d.warnf(keyNode(got["outputs"], name), "outputs."+name, "no step writes this output (bind one with ${{parent.outputs.%s}})", name)
		}
	}
	if len(d.errs) > errs || hasRegistered(steps) {
		return s // the server checks the graph once it has resolved the registered components
	}
	if err := pipeline.Check(*s.Pipeline); err != nil {
		d.report(at, []error{err})
	}
	return s
}

func hasRegistered(steps map[string]job.PipelineStep) bool {
	for _, s := range steps {
		if Registered(s) {
			return true
		}
	}
	return false
}

// pipelineSettings decodes a pipeline's `settings`. Keys Hangar does not use are tolerated with
// a warning, as Azure tolerates them.
func (d *pipelineDecoder) pipelineSettings(n *yaml.Node, path string) job.PipelineSettings {
	var s job.PipelineSettings
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "a mapping")
		return s
	}
	for _, p := range d.entries(n, path) {
		kp := join(path, p.key.Value)
		v := resolve(p.value)
		switch p.key.Value {
		case "default_compute":
			s.DefaultCompute = d.jobs.compute(v, kp) // serverless: the workspace's serverless pool (design 0017)
		case "default_datastore":
			s.DefaultDatastore = component.ComputeName(d.str(v, kp))
		case "continue_on_step_failure":
			s.ContinueOnStepFailure, _ = d.boolean(v, kp)
		case "force_rerun":
			s.ForceRerun, _ = d.boolean(v, kp)
		default:
			d.warnf(p.key, kp, "ignored (Hangar's pipeline settings: default_compute, default_datastore, continue_on_step_failure, force_rerun)")
		}
	}
	return s
}

// report adds errors of the form "<field path>: <message>" (the component package's) at n.
func (d *pipelineDecoder) report(n *yaml.Node, errs []error) {
	for _, err := range errs {
		path, msg, ok := strings.Cut(err.Error(), ": ")
		if !ok || strings.ContainsAny(path, " ") {
			path, msg = "", err.Error()
		}
		d.errorf(n, path, "%s", msg)
	}
}
