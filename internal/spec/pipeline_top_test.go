package spec

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// Azure's batch pipeline examples, shortened: a pipeline component whose step writes the
// component's output through `path: ${{parent.outputs.scores}}` (with a mode of its own), and a
// job defined by it (`component: pipeline.yml` at its top).
var topFiles = map[string]string{
	"components/prepare/prepare.yml": `name: uci_heart_prepare
type: command
inputs: {data: {type: uri_folder}}
outputs: {prepared_data: {type: uri_folder}}
command: cp -r ${{inputs.data}}/. ${{outputs.prepared_data}}
`,
	"components/score/score.yml": `name: uci_heart_score
type: command
inputs:
  data: {type: uri_folder}
  score_mode: {type: string, default: append}
outputs: {scores: {type: uri_folder}}
command: echo ${{inputs.score_mode}} > ${{outputs.scores}}/scores.csv
`,
	"pipeline.yml": `$schema: https://azuremlschemas.azureedge.net/latest/pipelineComponent.schema.json
type: pipeline
name: batch_scoring_uci_heart
display_name: Batch Scoring for UCI heart
inputs:
  input_data: {type: uri_folder}
  score_mode: {type: string, default: append}
outputs:
  scores: {type: uri_folder, mode: upload}
jobs:
  preprocess_job:
    type: command
    component: components/prepare/prepare.yml
    inputs: {data: "${{parent.inputs.input_data}}"}
  score_job:
    type: command
    component: components/score/score.yml
    inputs:
      data: ${{parent.jobs.preprocess_job.outputs.prepared_data}}
      score_mode: ${{parent.inputs.score_mode}}
    outputs:
      scores:
        mode: upload
        path: ${{parent.outputs.scores}}
`,
	"data/unlabeled/a.csv": "1\n",
}

// A pipeline job defined by a pipeline component file: the component's steps under their own
// names, the job's inputs their values, the job's compute their default, the job's outputs
// bound to the steps that write them with the settings the job gives (and the component's
// where the job gives none).
func TestPipelineJobDefinedByAComponent(t *testing.T) {
	job1 := `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
compute: batch-cluster
component: pipeline.yml
inputs:
  input_data: {type: uri_folder, path: data/unlabeled}
  score_mode: overwrite
outputs:
  scores: {type: uri_file, path: azureml://datastores/workspaceblobstore/paths/out/scores.csv}
`
	s, _, dir, err := parseJob(t, job1, topFiles)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Pipeline
	if len(p.Steps) != 2 || p.Component != "pipeline.yml" || s.DisplayName != "Batch Scoring for UCI heart" {
		t.Fatalf("pipeline = %+v (display name %q)", p, s.DisplayName)
	}
	prep, score := p.Steps["preprocess_job"], p.Steps["score_job"]
	if prep.Spec.Compute != "batch-cluster" || prep.Spec.Inputs["data"].Path != filepath.Join(dir, "data", "unlabeled") || prep.Group != "" {
		t.Errorf("preprocess_job = %+v", prep)
	}
	if score.Spec.Inputs["score_mode"].Value != "overwrite" || score.From["data"] != (job.StepRef{Step: "preprocess_job", Output: "prepared_data"}) {
		t.Errorf("score_job = %+v", score)
	}
	want := job.Output{Type: job.URIFile, Mode: "upload", Path: "azureml://datastores/workspaceblobstore/paths/out/scores.csv"}
	if diff := cmp.Diff(want, score.Spec.Outputs["scores"]); diff != "" {
		t.Errorf("score_job's output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]job.StepRef{"scores": {Step: "score_job", Output: "scores"}}, p.Outputs); diff != "" {
		t.Errorf("the pipeline's outputs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]job.Output{"scores": want}, s.Outputs); diff != "" {
		t.Errorf("the job's outputs (-want +got):\n%s", diff)
	}

	// Without outputs of its own, the job's outputs are the component's (mode: upload).
	s, _, _, err = parseJob(t, "type: pipeline\ncomponent: ./pipeline.yml\ninputs: {input_data: {type: uri_folder, path: data/unlabeled}}\n", topFiles)
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Pipeline.Steps["score_job"].Spec.Outputs["scores"]; o.Mode != "upload" || o.Type != job.URIFolder || s.Outputs["scores"].Mode != "upload" {
		t.Errorf("score_job's output = %+v, the job's %+v", o, s.Outputs)
	}
}

// A registered component at the top is left to the workspace, with the job's outputs as given
// (only the fields the file gives); problems name the file and field.
func TestPipelineJobComponentRefsAndErrors(t *testing.T) {
	s, _, _, err := parseJob(t, "type: pipeline\ncomponent: azureml:batch_scoring@latest\noutputs: {scores: {mode: upload}}\ninputs: {score_mode: append}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pipeline.Component != "azureml:batch_scoring@latest" || len(s.Pipeline.Steps) != 0 {
		t.Errorf("pipeline = %+v", s.Pipeline)
	}
	if diff := cmp.Diff(map[string]job.Output{"scores": {Mode: "upload"}}, s.Outputs); diff != "" {
		t.Errorf("outputs as given (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ yml, want string }{
		{"type: pipeline\ncomponent: pipeline.yml\n", "job.yml: inputs.input_data: required by the component (declared uri_folder, no default)"},
		{"type: pipeline\ncomponent: pipeline.yml\ninputs: {input_data: {type: uri_folder, path: data}, n: 1}\n", "job.yml: inputs.n: the component has no input n"},
		{"type: pipeline\ncomponent: pipeline.yml\ninputs: {input_data: {type: uri_folder, path: data}}\noutputs: {model: {mode: upload}}\n",
			`job.yml: outputs.model: the component pipeline.yml has no output "model" (its outputs: scores) (line 4)`},
		{"type: pipeline\ncomponent: components/score/score.yml\n", "job.yml: component: components/score/score.yml is a command component; a pipeline job's component is a pipeline component (type: pipeline), or give jobs (line 2)"},
		{"type: pipeline\ncomponent: nope.yml\n", "job.yml: component: nope.yml does not exist (line 2)"},
		{"type: pipeline\ncomponent: azureml:x\n", "job.yml: component: component azureml:x: give a version (x:1) or x@latest (line 2)"},
		{"type: pipeline\ncomponent: pipeline.yml\njobs: {a: {command: echo}}\n", "job.yml: jobs: give jobs or component, not both (line 3)"},
	} {
		_, _, _, err := parseJob(t, tt.yml, topFiles)
		checkErr(t, err, tt.want)
	}
}

// A step output bound to a pipeline output takes the pipeline output's type, mode and path, as
// Azure does (hello-pipeline-customize-output-file.yml): a uri_file output makes the step's
// output a file, whether the binding is the whole value or an output object's path.
func TestStepOutputsTakeThePipelineOutputs(t *testing.T) {
	yml := `type: pipeline
outputs:
  output:
    type: uri_file
    path: azureml://datastores/workspaceblobstore/paths/${{name}}/hello_world.txt
    mode: rw_mount
  folder: {mode: upload}
jobs:
  hello_world:
    command: echo "hello" && echo "world" > ${{outputs.output}} && echo x > ${{outputs.f}}/x
    outputs:
      output: ${{parent.outputs.output}}
      f: {path: "${{parent.outputs.folder}}", mode: rw_mount}
`
	s, _, _, err := parseJob(t, yml, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]job.Output{
		"output": {Type: job.URIFile, Mode: "rw_mount", Path: "azureml://datastores/workspaceblobstore/paths/${{name}}/hello_world.txt"},
		"f":      {Type: job.URIFolder, Mode: "upload"},
	}
	if diff := cmp.Diff(want, s.Pipeline.Steps["hello_world"].Spec.Outputs); diff != "" {
		t.Errorf("the step's outputs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]job.StepRef{"output": {Step: "hello_world", Output: "output"}, "folder": {Step: "hello_world", Output: "f"}}, s.Pipeline.Outputs); diff != "" {
		t.Errorf("the pipeline's outputs (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ out, want string }{
		{"{path: '${{parent.outputs.nope}}'}", "job.yml: jobs.a.outputs.o.path: ${{parent.outputs.nope}} is not an output of the pipeline (its outputs: x) (line 4)"},
		{"{path: 'x/${{parent.outputs.x}}'}", "job.yml: jobs.a.outputs.o.path: expected ${{parent.outputs.<name>}} (the whole value)"},
	} {
		_, _, _, err := parseJob(t, "type: pipeline\noutputs: {x: }\njobs:\n  a: {command: echo, outputs: {o: "+tt.out+"}}\n", nil)
		checkErr(t, err, tt.want)
	}
}

// Inside a pipeline component used by a step of a pipeline job (nested), an inner step's
// output bound by its path takes the component's declared output, then what the outer job
// gives that output.
func TestNestedOutputBindings(t *testing.T) {
	yml := `type: pipeline
inputs: {d: {type: uri_folder, path: data/unlabeled}}
outputs:
  final: {type: uri_folder, path: azureml://datastores/workspaceblobstore/paths/final}
jobs:
  scoring:
    type: pipeline
    component: pipeline.yml
    inputs: {input_data: "${{parent.inputs.d}}"}
    outputs: {scores: "${{parent.outputs.final}}"}
`
	s, _, _, err := parseJob(t, yml, topFiles)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Pipeline.Steps["scoring.score_job"].Spec.Outputs["scores"]
	want := job.Output{Type: job.URIFolder, Mode: "upload", Path: "azureml://datastores/workspaceblobstore/paths/final"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the inner step's output (-want +got):\n%s", diff)
	}
	if r := s.Pipeline.Outputs["final"]; r != (job.StepRef{Step: "scoring.score_job", Output: "scores"}) {
		t.Errorf("final is written by %+v", r)
	}
}
