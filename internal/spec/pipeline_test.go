package spec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// The component files the pipeline tests name.
var pipelineFiles = map[string]string{
	"src/train.py": "print(1)\n",
	"data/a.csv":   "1\n",
	"train.yml": `name: train
inputs:
  data: {type: uri_folder}
  epochs: {type: integer, default: 3, min: 1, max: 50}
  optim: {type: string, default: adam, enum: [adam, sgd]}
  seed: {type: integer, optional: true}
outputs:
  model: {type: uri_folder}
code: ./src
command: python train.py --data ${{inputs.data}} --epochs ${{inputs.epochs}} $[[--seed ${{inputs.seed}}]] --out ${{outputs.model}}
`,
	"flaky.yml": "name: flaky\nis_deterministic: false\ncommand: date\n",
	"dl.yml":    "name: dl\ninputs: {d: {type: uri_folder, mode: download}}\noutputs: {o: }\ncommand: ls ${{inputs.d}} > ${{outputs.o}}/x\n",
	"loop.yml":  "type: pipeline\nname: loop\njobs:\n  again: {type: pipeline, component: ./loop.yml}\n",
	"twice.yml": `type: pipeline
name: twice
inputs: {data: {type: uri_folder}, epochs: {type: integer, default: 2}}
outputs: {model: {type: uri_folder}}
jobs:
  one:
    component: ./train.yml
    inputs: {data: "${{parent.inputs.data}}", epochs: "${{parent.inputs.epochs}}"}
  two:
    component: ./train.yml
    inputs: {data: "${{parent.jobs.one.outputs.model}}"}
    outputs: {model: "${{parent.outputs.model}}"}
`,
}

func parsePipeline(t *testing.T, yml string) (*job.Spec, string, error) {
	t.Helper()
	dir := writeTree(t, pipelineFiles)
	sp, _, err := ParseJob("pipeline.yml", []byte(yml), dir, nil)
	return sp, dir, err
}

// A pipeline's steps come out bound: literals and the pipeline's inputs copied in, component
// defaults filled, step outputs read by other steps in From, the settings' defaults applied.
func TestPipelineDecode(t *testing.T) {
	sp, dir, err := parsePipeline(t, `type: pipeline
settings: {default_compute: azureml:gpu-pool, default_datastore: azureml:workspaceblobstore, force_rerun: true}
inputs:
  raw: {type: uri_folder, path: ./data}
  n: 7
outputs:
  final: {mode: upload}
jobs:
  prep:
    command: cat ${{inputs.raw}} > ${{outputs.clean}}/x && echo ${{inputs.n}}
    inputs: {raw: "${{parent.inputs.raw}}", n: "${{parent.inputs.n}}"}
    outputs: {clean: }
    compute: azureml:cpu-pool
    environment_variables: {A: "1"}
  train:
    component: ./train.yml
    inputs: {data: "${{parent.jobs.prep.outputs.clean}}", epochs: "${{parent.inputs.n}}", optim: sgd}
    outputs: {model: "${{parent.outputs.final}}"}
  clock:
    component: ./flaky.yml
`)
	if err != nil {
		t.Fatal(err)
	}
	p := sp.Pipeline
	want := job.PipelineSettings{DefaultCompute: "gpu-pool", DefaultDatastore: "workspaceblobstore", ForceRerun: true}
	if d := cmp.Diff(want, p.Settings); d != "" {
		t.Errorf("settings (-want +got):\n%s", d)
	}
	prep, train, clock := p.Steps["prep"], p.Steps["train"], p.Steps["clock"]
	if prep.Spec.Compute != "cpu-pool" || train.Spec.Compute != "gpu-pool" {
		t.Errorf("computes = %q, %q; want cpu-pool (the step's), gpu-pool (the default)", prep.Spec.Compute, train.Spec.Compute)
	}
	if got := prep.Spec.Inputs["raw"].Path; got != dir+"/data" {
		t.Errorf("prep raw = %q, want the pipeline's local folder", got)
	}
	if got := prep.Spec.Inputs["n"]; got.Value != "7" || got.Type != job.InputInteger {
		t.Errorf("prep n = %+v, want the integer 7", got)
	}
	if got := train.From["data"]; got != (job.StepRef{Step: "prep", Output: "clean"}) {
		t.Errorf("train data from %+v, want prep.clean", got)
	}
	if got := train.Spec.Inputs["data"]; got.Path != "" || got.Type != job.URIFolder {
		t.Errorf("train data = %+v, want the declaration without a path (bound when it starts)", got)
	}
	for in, v := range map[string]string{"epochs": "7", "optim": "sgd"} {
		if got := train.Spec.Inputs[in].Value; got != v {
			t.Errorf("train %s = %q, want %q", in, got, v)
		}
	}
	if got := train.Spec.Inputs["seed"]; !got.Optional || got.Value != "" {
		t.Errorf("train seed = %+v, want the optional input without a value (its $[[ ]] dropped)", got)
	}
	if train.Spec.Code != dir+"/src" || !strings.HasSuffix(train.Component, "train.yml") || !train.Deterministic {
		t.Errorf("train = code %q, component %q, deterministic %v", train.Spec.Code, train.Component, train.Deterministic)
	}
	if clock.Deterministic || !prep.Deterministic {
		t.Errorf("deterministic: clock %v (is_deterministic: false), prep %v (inline)", clock.Deterministic, prep.Deterministic)
	}
	if got := p.Outputs["final"]; got != (job.StepRef{Step: "train", Output: "model"}) {
		t.Errorf("pipeline output final = %+v, want train.model", got)
	}
	if p.Settings.ContinueOnStepFailure {
		t.Error("continue_on_step_failure defaults to true, want false (the SDK's default)")
	}
}

// A component's declared mode is what a step gets unless it gives its own (Azure's rule).
func TestPipelineDeclaredMode(t *testing.T) {
	sp, _, err := parsePipeline(t, `type: pipeline
jobs:
  a: {component: ./dl.yml, inputs: {d: {path: ./data}}}
  b: {component: ./dl.yml, inputs: {d: {path: ./data, mode: direct}}}
  c: {component: ./dl.yml, inputs: {d: "${{parent.jobs.a.outputs.o}}"}}
  t: {component: ./train.yml, inputs: {data: {path: ./data}}}
`)
	if err != nil {
		t.Fatal(err)
	}
	for step, want := range map[string]string{"a": "download", "b": "direct", "c": "download", "t": "ro_mount"} {
		in := sp.Pipeline.Steps[step].Spec.Inputs
		name := "d"
		if step == "t" {
			name = "data"
		}
		if got := in[name].Mode; got != want {
			t.Errorf("step %s mode = %q, want %q", step, got, want)
		}
	}
}

// A pipeline component used as a step is flattened into <step>.<inner> steps (Group set), its
// inputs rewired to what the outer step gives, and the steps after it read its outputs from
// the inner step that writes them.
func TestPipelineNestedComponent(t *testing.T) {
	sp, dir, err := parsePipeline(t, `type: pipeline
inputs: {raw: {type: uri_folder, path: ./data}}
jobs:
  fit:
    type: pipeline
    component: ./twice.yml
    inputs: {data: "${{parent.inputs.raw}}", epochs: 9}
  use:
    command: ls ${{inputs.m}}
    inputs: {m: "${{parent.jobs.fit.outputs.model}}"}
`)
	if err != nil {
		t.Fatal(err)
	}
	steps := sp.Pipeline.Steps
	one, two := steps["fit.one"], steps["fit.two"]
	if len(steps) != 3 || one.Group != "fit" || two.Group != "fit" {
		t.Fatalf("steps = %+v; want fit.one, fit.two (group fit) and use", steps)
	}
	if one.Spec.Inputs["data"].Path != dir+"/data" || one.Spec.Inputs["epochs"].Value != "9" {
		t.Errorf("fit.one inputs = %+v; want the outer data and epochs 9", one.Spec.Inputs)
	}
	if got := two.From["data"]; got != (job.StepRef{Step: "fit.one", Output: "model"}) {
		t.Errorf("fit.two reads %+v, want fit.one.model", got)
	}
	if got := steps["use"].From["m"]; got != (job.StepRef{Step: "fit.two", Output: "model"}) {
		t.Errorf("use reads %+v, want fit.two.model (the component's output)", got)
	}
}

// Bad pipelines are refused naming the file, the field path and what was expected.
func TestPipelineErrors(t *testing.T) {
	for _, tt := range []struct{ name, yml, want string }{
		{"unknown parent input", "jobs:\n  a:\n    command: echo ${{inputs.x}}\n    inputs: {x: \"${{parent.inputs.nope}}\"}\n",
			"pipeline.yml: jobs.a.inputs.x: ${{parent.inputs.nope}} is not an input of the pipeline (its inputs: none declared) (line 5)"},
		{"parent output as input", "outputs: {o: }\njobs:\n  a:\n    command: echo ${{inputs.x}}\n    inputs: {x: \"${{parent.outputs.o}}\"}\n",
			"pipeline.yml: jobs.a.inputs.x: ${{parent.outputs.o}} is an output of the pipeline"},
		{"part of a value", "inputs: {n: 1}\njobs:\n  a:\n    command: echo ${{inputs.x}}\n    inputs: {x: \"n=${{parent.inputs.n}}\"}\n",
			"pipeline.yml: jobs.a.inputs.x: a binding must be the whole value"},
		{"unknown parent output", "jobs:\n  a:\n    command: echo ${{outputs.o}}\n    outputs: {o: \"${{parent.outputs.nope}}\"}\n",
			"pipeline.yml: jobs.a.outputs.o: ${{parent.outputs.nope}} is not an output of the pipeline (its outputs: none declared) (line 5)"},
		{"unknown step", "jobs:\n  a:\n    command: echo ${{inputs.x}}\n    inputs: {x: \"${{parent.jobs.nope.outputs.o}}\"}\n",
			`pipeline.yml: jobs.a.inputs.x: step "nope" does not exist`},
		{"cycle", "jobs:\n  a: {command: 'echo ${{inputs.x}} ${{outputs.o}}', inputs: {x: '${{parent.jobs.b.outputs.o}}'}, outputs: {o: }}\n  b: {command: 'echo ${{inputs.x}} ${{outputs.o}}', inputs: {x: '${{parent.jobs.a.outputs.o}}'}, outputs: {o: }}\n",
			"pipeline.yml: jobs: a cycle: a → b → a"},
		{"spark step", "jobs:\n  a: {type: spark, entry: {file: x.py}}\n",
			"pipeline.yml: jobs.a.type: spark steps are not supported"},
		{"inline step problem", "jobs:\n  a: {command: echo, resources: {instance_count: zero}}\n",
			"pipeline.yml: jobs.a.resources.instance_count: expected integer, got \"zero\" (line 3)"},
		{"no steps", "jobs: {}\n", "pipeline.yml: jobs: a pipeline needs at least one step"},
		{"bad step name", "jobs:\n  a.b: {command: echo}\n", `pipeline.yml: jobs.a.b: step name "a.b" must start with a letter`},
		{"not an integer", "jobs:\n  t: {component: ./train.yml, inputs: {data: {path: ./data}, epochs: many}}\n",
			`pipeline.yml: jobs.t.inputs.epochs: expected an integer, got "many"`},
		{"above max", "jobs:\n  t: {component: ./train.yml, inputs: {data: {path: ./data}, epochs: 51}}\n",
			"pipeline.yml: jobs.t.inputs.epochs: 51 is above max 50"},
		{"not in enum", "jobs:\n  t: {component: ./train.yml, inputs: {data: {path: ./data}, optim: lbfgs}}\n",
			`pipeline.yml: jobs.t.inputs.optim: "lbfgs" is not one of the enum values (adam, sgd)`},
		{"missing input", "jobs:\n  t: {component: ./train.yml}\n",
			"pipeline.yml: jobs.t.inputs.data: required by the component (declared uri_folder, no default)"},
		{"undeclared input", "jobs:\n  t: {component: ./train.yml, inputs: {data: {path: ./data}, lr: 0.1}}\n",
			"pipeline.yml: jobs.t.inputs.lr: the component has no input lr (its inputs: data, epochs, optim, seed)"},
		{"undeclared output", "jobs:\n  t: {component: ./train.yml, inputs: {data: {path: ./data}}, outputs: {nope: }}\n",
			"pipeline.yml: jobs.t.outputs.nope: the component train.yml has no output \"nope\" (its outputs: model) (line 3)"},
		{"nested value breaks an inner step", "jobs:\n  f: {type: pipeline, component: ./twice.yml, inputs: {data: {path: ./data}, epochs: 99}}\n",
			"pipeline.yml: jobs.f.inputs.epochs: 99 is above max 50 (step one reads it as its input epochs) (line 3)"},
		{"missing component file", "jobs:\n  t: {component: ./nope.yml}\n",
			"pipeline.yml: jobs.t.component: ./nope.yml does not exist"},
		{"registry component", "jobs:\n  t: {component: 'azureml://registries/azureml/components/x/versions/1'}\n",
			"pipeline.yml: jobs.t.component: component azureml://registries/azureml/components/x/versions/1 is in an Azure ML registry"},
		{"bad registered ref", "jobs:\n  t: {component: 'azureml:train'}\n",
			"pipeline.yml: jobs.t.component: component azureml:train: give a version (train:1) or train@latest"},
		{"component uses itself", "jobs:\n  t: {type: pipeline, component: ./loop.yml}\n",
			"jobs.again.component: components nested more than 8 deep (does ./loop.yml use itself?)"},
		{"problem in an inline component", "jobs:\n  t:\n    component:\n      name: c\n      command: echo ${{inputs.nope}}\n",
			"pipeline.yml: jobs.t.component.command: unknown reference ${{inputs.nope}}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := parsePipeline(t, "type: pipeline\n"+tt.yml)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// A component's file is checked on its own: the name rule, optional inputs only inside $[[ ]],
// min, max and enum against the default, and Azure's component fields.
func TestParseComponentFile(t *testing.T) {
	dir := writeTree(t, pipelineFiles)
	c, _, err := ParseComponentFile(dir+"/train.yml", []string{"version=4"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "train" || c.Version != "4" || c.Type != "command" || !c.Deterministic || c.Job.Code != dir+"/src" {
		t.Errorf("train.yml = %+v", c)
	}
	if e := c.Inputs["epochs"]; e.Value != "3" || !e.HasDefault || *e.Min != 1 || *e.Max != 50 {
		t.Errorf("epochs = %+v, want default 3, min 1, max 50", e)
	}
	for _, tt := range []struct{ name, yml, want string }{
		{"bad name", "name: 1x\ncommand: echo\n", `c.yml: name: expected a name of letters, digits, _ and - starting with a letter or _ (at most 255), got "1x" (line 1)`},
		{"optional outside $[[ ]]", "name: c\ninputs: {s: {type: integer, optional: true}}\ncommand: echo ${{inputs.s}}\n",
			"c.yml: command: optional input ${{inputs.s}} must be used inside $[[ ... ]] (line 3)"},
		{"default below min", "name: c\ninputs: {n: {type: integer, default: 0, min: 1}}\ncommand: echo ${{inputs.n}}\n",
			"c.yml: inputs.n.default: 0 is below min 1 (line 2)"},
		{"default not in enum", "name: c\ninputs: {o: {type: string, default: x, enum: [a, b]}}\ncommand: echo ${{inputs.o}}\n",
			`c.yml: inputs.o.default: "x" is not one of the enum values (a, b) (line 2)`},
		{"min on a string", "name: c\ninputs: {o: {type: string, min: 1}}\ncommand: echo ${{inputs.o}}\n",
			"c.yml: inputs.o.min: only allowed for integer and number inputs (line 2)"},
		{"spark", "name: c\ntype: spark\n", "c.yml: type: spark components are not supported (command and pipeline components are) (line 2)"},
		{"unknown field", "name: c\ncommand: echo\nretries: 3\n", "c.yml: retries: unknown field (line 3)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := writeTree(t, map[string]string{"c.yml": tt.yml})
			_, _, err := ParseComponentFile(d+"/c.yml", nil)
			if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), d+"/", ""), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}
