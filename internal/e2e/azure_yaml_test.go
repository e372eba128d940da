package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/job"
)

// The YAML Azure ML accepts that Hangar refused before issue 28, run end to end as a user runs
// it: each test reads what the user gets (a step's log, a downloaded output, a scoring answer).

// waitPipeline waits for a pipeline to end and fails the test, with its steps, unless it
// ended as want.
func waitPipeline(t *testing.T, w *ws, name string, want job.State) {
	t.Helper()
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != want {
		t.Fatalf("pipeline %s ended %s, want %s: %s\nsteps: %+v", name, d.Status, want, d.StatusReason, d.Pipeline)
	}
}

// stepLog is the log of a pipeline step's run.
func stepLog(t *testing.T, w *ws, pipeline, step string) string {
	t.Helper()
	st := pipelineSteps(t, w.show(pipeline))[step]
	if st.RunID == "" {
		t.Fatalf("step %s of %s has no run: %+v", step, pipeline, st)
	}
	return w.logs(st.RunID)
}

// Versions are strings, as Azure's (version: 0.0.1, version: "2"): components and data assets
// register them, a pipeline names them, and @latest is the version created last (0.0.3 after
// "2", though 2 is the higher number).
func TestAzureYAMLStringVersions(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	hello := func(v string) string {
		return fmt.Sprintf("name: hello\nversion: %s\ntype: command\ncommand: echo hello from %s\n", v, strings.Trim(v, `"`))
	}
	writeFiles(t, dir, map[string]string{
		"hello1.yml": hello("0.0.1"), "hello2.yml": hello(`"2"`), "hello3.yml": hello("0.0.3"),
		"data/rows.csv": "a,b\n1,2\n",
		"iris.yml":      "name: iris\nversion: 0.0.1\ntype: uri_file\npath: data/rows.csv\n",
		"pipeline.yml": `type: pipeline
settings: {default_compute: local}
jobs:
  latest: {component: "azureml:hello@latest"}
  pinned: {component: "azureml:hello:0.0.1"}
  rows:
    command: cat ${{inputs.rows}}
    inputs: {rows: {type: uri_file, path: "azureml:iris:0.0.1"}}
`,
	})
	for _, f := range []string{"hello1.yml", "hello2.yml", "hello3.yml"} {
		w.ok("component", "create", "-f", filepath.Join(dir, f))
	}
	r := w.ok("data", "create", "-f", filepath.Join(dir, "iris.yml"))
	if !strings.Contains(r.stdout, "0.0.1") {
		t.Errorf("data create said %q", r.stdout)
	}
	var v component.Version
	w.dataJSON(&v, "component", "show", "hello@latest")
	if v.Version != "0.0.3" {
		t.Errorf("hello@latest = %s, want 0.0.3 (the newest created)", v.Version)
	}
	name := w.create(filepath.Join(dir, "pipeline.yml"))
	waitPipeline(t, w, name, job.Completed)
	for step, want := range map[string]string{"latest": "hello from 0.0.3", "pinned": "hello from 0.0.1", "rows": "1,2"} {
		if got := stepLog(t, w, name, step); !strings.Contains(got, want) {
			t.Errorf("step %s said %q, want %q", step, got, want)
		}
	}
}

// batchScoringFiles are Azure's batch-scoring-with-preprocessing example, shortened and in
// bash: a pipeline component whose score step writes the component's output through
// `path: ${{parent.outputs.scores}}`, and a job defined by it (component: pipeline.yml).
var batchScoringFiles = map[string]string{
	"components/prepare/prepare.yml": `$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: uci_heart_prepare
type: command
inputs: {data: {type: uri_folder}}
outputs: {prepared_data: {type: uri_folder}}
command: cp ${{inputs.data}}/*.csv ${{outputs.prepared_data}}/
`,
	"components/score/score.yml": `$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: uci_heart_score
type: command
inputs:
  data: {type: uri_folder}
  score_mode: {type: string, default: append}
outputs: {scores: {type: uri_folder}}
command: >-
  cat ${{inputs.data}}/*.csv > ${{outputs.scores}}/scores.csv &&
  echo ${{inputs.score_mode}} > ${{outputs.scores}}/mode.txt
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
    inputs:
      data: ${{parent.inputs.input_data}}
    outputs:
      prepared_data:
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
	"pipeline-job.yml": `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: uci-classifier-score-job
compute: azureml:local
component: pipeline.yml
inputs:
  input_data:
    type: uri_folder
  score_mode: append
outputs:
  scores:
    mode: upload
`,
	"registered-job.yml": `type: pipeline
compute: local
component: azureml:batch_scoring_uci_heart@latest
inputs:
  input_data: {type: uri_folder, path: data/unlabeled}
  score_mode: overwrite
`,
	"data/unlabeled/rows.csv": "63,1,145\n",
}

// A pipeline job defined by a pipeline component, from the file (with the script's --set of
// the input's path) and registered (azureml:<name>@latest): the component's steps run under
// their own names and the user downloads the job's output, which a step wrote through
// `path: ${{parent.outputs.scores}}`.
func TestAzureYAMLPipelineJobDefinedByAComponent(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, batchScoringFiles)
	download := func(name string) (string, string) {
		out := t.TempDir()
		w.ok("job", "download", "-n", name, "--output-name", "scores", "--download-path", out)
		at := filepath.Join(out, name, "named-outputs", "scores")
		return readFile(t, filepath.Join(at, "scores.csv")), strings.TrimSpace(readFile(t, filepath.Join(at, "mode.txt")))
	}

	name := w.create(filepath.Join(dir, "pipeline-job.yml"), "--set", "inputs.input_data.path=data/unlabeled")
	waitPipeline(t, w, name, job.Completed)
	if steps := pipelineSteps(t, w.show(name)); len(steps) != 2 || steps["preprocess_job"].RunID == "" || steps["score_job"].RunID == "" {
		t.Errorf("steps = %+v; want preprocess_job and score_job", steps)
	}
	if scores, mode := download(name); scores != "63,1,145\n" || mode != "append" {
		t.Errorf("downloaded scores %q, mode %q; want the unlabeled rows, append", scores, mode)
	}

	w.ok("component", "create", "-f", filepath.Join(dir, "pipeline.yml"))
	name = w.create(filepath.Join(dir, "registered-job.yml"))
	waitPipeline(t, w, name, job.Completed)
	if scores, mode := download(name); scores != "63,1,145\n" || mode != "overwrite" {
		t.Errorf("registered: downloaded scores %q, mode %q; want the unlabeled rows, overwrite", scores, mode)
	}
	if r := w.run("job", "create", "-f", filepath.Join(dir, "pipeline-job.yml")); r.code != 1 ||
		!strings.Contains(r.stderr, "pipeline-job.yml: inputs.input_data.path: required") {
		t.Errorf("without the input's path: exit %d\n%s", r.code, r.stderr)
	}
}

// A component's additional_includes reach its code snapshot (a folder by its name at the root,
// a file by its name); a component of Azure's first schema runs with `type: path` data and
// `code:` naming a single file; an environment given as file:./env.yml is the environment the
// step runs in. Missing files are refused naming the file and the field.
func TestAzureYAMLCodeIncludesAndEnvironmentFiles(t *testing.T) {
	t.Parallel()
	py := systemPython(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"component_src/run.sh":  "echo from the code folder\ncat common_src/helper.txt\ncat settings.yml\n",
		"common_src/helper.txt": "helper from common_src\n",
		"settings.yml":          "setting: from an included file\n",
		"component.yml": `$schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
name: component_additional_include_cli
type: command
code: ./component_src
additional_includes:
  - common_src
  - ./settings.yml
command: bash run.sh
`,
		"train.sh":      "wc -l < \"$1\" | tr -d ' ' > \"$2/rows.txt\"\n",
		"data/rows.csv": "y\n1\n2\n",
		"train.yml": `$schema: http://azureml/sdk-2-0/CommandComponent.json
name: train_for_rai
version: 1
type: command
inputs:
  training_data: {type: path}
outputs:
  model_output_json: {type: path}
code: ./train.sh
command: bash train.sh ${{inputs.training_data}} ${{outputs.model_output_json}}
`,
		"environments/azureml/env.yml": "$schema: https://azuremlschemas.azureedge.net/latest/environment.schema.json\n" +
			"name: own_python\nversion: 3.12-local\ninterpreter_path: " + py + "\n",
		"pipeline.yml": `type: pipeline
settings: {default_compute: local}
outputs: {rows: }
jobs:
  includes: {component: ./component.yml}
  legacy:
    component: ./train.yml
    inputs:
      training_data: {type: path, path: ./data/rows.csv}
    outputs:
      model_output_json: ${{parent.outputs.rows}}
  own_env:
    command: python -c 'import sys; print(sys.executable)'
    environment: file:./environments/azureml/env.yml
`,
		"missing-include.yml": "name: m\ncommand: ls\nadditional_includes: [nope]\n",
		"missing-env.yml":     "command: echo\nenvironment: file:./environments/nope.yml\n",
		"bad-pipeline.yml":    "type: pipeline\njobs:\n  a: {component: ./missing-include.yml}\n",
	})
	name := w.create(filepath.Join(dir, "pipeline.yml"))
	waitPipeline(t, w, name, job.Completed)
	got := stepLog(t, w, name, "includes")
	for _, want := range []string{"from the code folder", "helper from common_src", "setting: from an included file"} {
		if !strings.Contains(got, want) {
			t.Errorf("the includes step said %q, want %q", got, want)
		}
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--output-name", "rows", "--download-path", out)
	if rows := strings.TrimSpace(readFile(t, filepath.Join(out, name, "named-outputs", "rows", "rows.txt"))); rows != "3" {
		t.Errorf("the legacy step counted %q lines, want 3 (its type: path input was the file)", rows)
	}
	if got := stepLog(t, w, name, "own_env"); !strings.Contains(got, "hangar/bin/python") {
		t.Errorf("the step with environment: file:./env.yml ran %q, want the environment's interpreter", got)
	}

	for file, want := range map[string]string{
		"bad-pipeline.yml": "missing-include.yml: additional_includes[0]: nope does not exist",
		"missing-env.yml":  "missing-env.yml: environment: ./environments/nope.yml does not exist (line 2)",
	} {
		if r := w.run("job", "create", "-f", filepath.Join(dir, file)); r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", file, r.code, r.stderr, want)
		}
	}
}

// systemPython is a python3 at a fixed path that a run's box shows (not a user's shim).
func systemPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("python3 is required at /usr/bin or /usr/local/bin in CI: run scripts/setup/deps.sh")
	}
	t.Skip("no python3 at /usr/bin or /usr/local/bin")
	return ""
}

// A pipeline output of type uri_file bound to a step's output makes the step's output a file
// (echo > ${{outputs.output}} writes it), which the user downloads as the pipeline's output
// under its path's name; a later step reads that datastore path (Azure's azureml/... layout) as
// the earlier step left it, resolved when it starts. A path in what an earlier step writes that
// is still missing then fails the reading step with what is missing; a path nobody writes is
// refused at submit, as missing, not as "no job named <folder>".
func TestAzureYAMLPipelineOutputFileAndDatastorePath(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	const at = "azureml://datastores/workspaceblobstore/paths/azureml/"
	reader := func(read string) string {
		return `  reader:
    command: echo read && cat ${{inputs.greeting}}
    inputs:
      greeting: {type: uri_file, path: "` + at + read + `", mode: download}
      placeholder: ${{parent.jobs.hello_world.outputs.output}}
`
	}
	writeFiles(t, dir, map[string]string{
		"pipeline.yml": `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: hello_pipeline_customize_output_file
settings: {default_compute: local}
outputs:
  output:
    type: uri_file
    path: ` + at + `hello_pipeline/hello_world.txt
    mode: rw_mount
jobs:
  hello_world:
    command: echo "hello" && echo "world" > ${{outputs.output}}
    outputs:
      output: ${{parent.outputs.output}}
` + reader("hello_pipeline/hello_world.txt"),
		"missing.yml": `type: pipeline
settings: {default_compute: local}
outputs:
  output: {type: uri_folder, path: "` + at + `hello_folder"}
jobs:
  hello_world:
    command: echo world > ${{outputs.output}}/hello_world.txt
    outputs: {output: "${{parent.outputs.output}}"}
` + reader("hello_folder/other.txt"),
		"nobody.yml": "type: pipeline\nsettings: {default_compute: local}\njobs:\n  hello_world: {command: echo, outputs: {output: }}\n" + reader("nobody/x.txt"),
	})
	name := w.create(filepath.Join(dir, "pipeline.yml"))
	waitPipeline(t, w, name, job.Completed)
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--output-name", "output", "--download-path", out)
	if got := readFile(t, filepath.Join(out, name, "named-outputs", "output", "hello_world.txt")); got != "world\n" {
		t.Errorf("the pipeline's output hello_world.txt holds %q, want world", got)
	}
	if got := stepLog(t, w, name, "reader"); !strings.Contains(got, "read\nworld") {
		t.Errorf("the reader said %q, want the file hello_world wrote", got)
	}

	name = w.create(filepath.Join(dir, "missing.yml"))
	waitPipeline(t, w, name, job.Failed)
	st := pipelineSteps(t, w.show(name))["reader"]
	want := "input greeting: " + at + "hello_folder/other.txt: nothing at other.txt (when this step started; step hello_world of this pipeline writes there)"
	if st.Reason != want {
		t.Errorf("the reader of a missing path: %+v; want the reason %q", st, want)
	}
	r := w.run("job", "create", "-f", filepath.Join(dir, "nobody.yml"))
	if want := "nobody.yml: jobs.reader.inputs.greeting.path: nothing was written at " + at + "nobody/x.txt"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("a path nobody writes: exit %d, %q; want %q", r.code, r.stderr, want)
	}
}

// A deployment named with '_', as Azure's own examples name one (regular_deployment), is
// created and answers.
func TestAzureYAMLDeploymentNamedWithUnderscore(t *testing.T) {
	t.Parallel()
	w, dir := endpointWS(t)
	writeFiles(t, dir, map[string]string{"regular.yml": deploymentYAML("regular_deployment")})
	w.ok("online-deployment", "create", "-f", filepath.Join(dir, "regular.yml"), "--all-traffic")
	r := w.ok("online-endpoint", "invoke", "-n", "my-endpoint", "--deployment-name", "regular_deployment",
		"--request-file", filepath.Join(dir, "request.json"))
	if !strings.Contains(r.stdout, "regular_deployment") || !(strings.Contains(r.stdout, `"y": 21`) || strings.Contains(r.stdout, `"y":21`)) {
		t.Errorf("invoke answered %q; want y = 21 from regular_deployment", r.stdout)
	}
}
