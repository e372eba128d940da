package spec

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

type validJobTest struct {
	name     string
	yml      string
	files    map[string]string
	sets     []string
	want     *job.Spec
	warnings []string
}

func TestParseJobValid(t *testing.T) {
	for _, tt := range validJobTests {
		t.Run(tt.name, func(t *testing.T) {
			s, warnings, dir, err := parseJob(t, tt.yml, tt.files, tt.sets...)
			if err != nil {
				t.Fatalf("unexpected error:\n%v", err)
			}
			diff(t, normalize(t, s, dir), tt.want)
			diff(t, warnings, tt.warnings)
		})
	}
}

var validJobTests = []validJobTest{
	{
		name: "azure hello world",
		yml: `$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
command: echo "hello world"
environment:
  image: library/python:latest
compute: azureml:local
`,
		want: baseSpec(func(s *job.Spec) {
			s.Command = `echo "hello world"`
			s.Environment = job.Environment{Image: "library/python:latest"}
			s.Compute = "local"
		}),
	},
	{
		name: "azure iris job",
		yml: `$schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
code: src
command: >-
  python main.py
  --iris-csv ${{inputs.iris_csv}}
  --learning-rate ${{inputs.learning_rate}}
  --boosting ${{inputs.boosting}}
  --model-dir ${{outputs.model_dir}}
inputs:
  iris_csv:
    type: uri_file
    path: https://azuremlexamples.blob.core.windows.net/datasets/iris.csv
  learning_rate: 0.9
  boosting: gbdt
outputs:
  model_dir:
environment: azureml:AzureML-lightgbm-3.3@latest
environment_variables:
  AZUREML_COMMON_RUNTIME_USE_SBOM_CAPABILITY: true
  WORKERS: 4
compute: azureml:cpu-cluster
display_name: lightgbm-iris-example
experiment_name: lightgbm-iris-example
description: Train a LightGBM model on the Iris dataset.
tags: {owner: me, version: 2}
`,
		files: map[string]string{"src/main.py": "print(1)"},
		want: baseSpec(func(s *job.Spec) {
			s.Code = "$DIR/src"
			s.Command = "python main.py --iris-csv ${{inputs.iris_csv}} --learning-rate ${{inputs.learning_rate}} --boosting ${{inputs.boosting}} --model-dir ${{outputs.model_dir}}"
			s.Inputs = map[string]job.Input{
				"iris_csv":      {Type: "uri_file", Mode: "ro_mount", Path: "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv"},
				"learning_rate": {Type: "number", Value: "0.9"},
				"boosting":      {Type: "string", Value: "gbdt"},
			}
			s.Outputs = map[string]job.Output{"model_dir": {Type: "uri_folder", Mode: "rw_mount"}}
			s.Environment = job.Environment{Ref: "AzureML-lightgbm-3.3@latest"}
			s.EnvironmentVariables = map[string]string{"AZUREML_COMMON_RUNTIME_USE_SBOM_CAPABILITY": "true", "WORKERS": "4"}
			s.Compute = "cpu-cluster"
			s.DisplayName = "lightgbm-iris-example"
			s.ExperimentName = "lightgbm-iris-example"
			s.Description = "Train a LightGBM model on the Iris dataset."
			s.Tags = map[string]string{"owner": "me", "version": "2"}
		}),
	},
	{
		name: "optional input in segment",
		yml: `command: python train.py $[[--lr ${{inputs.lr}}]] --epochs ${{inputs.epochs}}
inputs:
  lr: {type: number, optional: true}
  epochs: {type: integer, default: 3, min: 1, max: 10, description: passes}
`,
		want: baseSpec(func(s *job.Spec) {
			s.Command = "python train.py $[[--lr ${{inputs.lr}}]] --epochs ${{inputs.epochs}}"
			s.Inputs = map[string]job.Input{
				"lr":     {Type: "number", Optional: true},
				"epochs": {Type: "integer", Value: "3", Description: "passes"},
			}
		}),
	},
	{
		name: "literal objects, value wins over default, enums",
		yml: `command: echo ${{inputs.a}} ${{inputs.b}} ${{inputs.c}} ${{inputs.d}}
inputs:
  a: {type: String, default: x, value: 5}
  b: {type: boolean, default: false}
  c: {type: number, value: 2, enum: [1, 2.0, 3]}
  d: {type: string, default: adam, enum: [sgd, adam]}
`,
		want: baseSpec(func(s *job.Spec) {
			s.Command = "echo ${{inputs.a}} ${{inputs.b}} ${{inputs.c}} ${{inputs.d}}"
			s.Inputs = map[string]job.Input{
				"a": {Type: "string", Value: "5"},
				"b": {Type: "boolean", Value: "false"},
				"c": {Type: "number", Value: "2"},
				"d": {Type: "string", Value: "adam"},
			}
		}),
	},
	{
		name: "scalar literals typed by tag",
		yml: `command: "true"
inputs: {i: 3, f: 1e-3, b: true, s: hello, q: "5", u: https://example.com/x}
`,
		want: baseSpec(func(s *job.Spec) {
			s.Command = "true"
			s.Inputs = map[string]job.Input{
				"i": {Type: "integer", Value: "3"}, "f": {Type: "number", Value: "1e-3"},
				"b": {Type: "boolean", Value: "true"}, "s": {Type: "string", Value: "hello"},
				"q": {Type: "string", Value: "5"}, "u": {Type: "string", Value: "https://example.com/x"},
			}
		}),
	},
	{
		name: "data inputs: local, file:, URIs, modes",
		yml: `command: ls ${{inputs.a}} ${{inputs.b}} ${{inputs.c}} ${{inputs.d}} ${{inputs.e}} ${{inputs.f}} ${{inputs.g}}
inputs:
  a: {path: data}
  b: {type: uri_file, path: file:./data/x.csv, mode: Download}
  c: {type: URI_FOLDER, path: azureml://datastores/workspaceblobstore/paths/data/, mode: direct}
  d: {type: mltable, path: azureml:iris:1, mode: eval_mount, datastore: ds, description: table}
  e: {type: mlflow_model, path: runs:/abc/model}
  f: {type: uri_file, path: wasbs://c@acct.blob.core.windows.net/x.csv}
  g: {type: custom_model, path: ./model}
`,
		files: map[string]string{"data/x.csv": "a,b", "model/": ""},
		want: baseSpec(func(s *job.Spec) {
			s.Command = "ls ${{inputs.a}} ${{inputs.b}} ${{inputs.c}} ${{inputs.d}} ${{inputs.e}} ${{inputs.f}} ${{inputs.g}}"
			s.Inputs = map[string]job.Input{
				"a": {Type: "uri_folder", Mode: "ro_mount", Path: "$DIR/data"},
				"b": {Type: "uri_file", Mode: "download", Path: "$DIR/data/x.csv"},
				"c": {Type: "uri_folder", Mode: "direct", Path: "azureml://datastores/workspaceblobstore/paths/data/"},
				"d": {Type: "mltable", Mode: "eval_mount", Path: "azureml:iris:1", Datastore: "ds", Description: "table"},
				"e": {Type: "mlflow_model", Mode: "ro_mount", Path: "runs:/abc/model"},
				"f": {Type: "uri_file", Mode: "ro_mount", Path: "wasbs://c@acct.blob.core.windows.net/x.csv"},
				"g": {Type: "custom_model", Mode: "ro_mount", Path: "$DIR/model"},
			}
		}),
	},
	{
		name: "outputs",
		yml: `command: train ${{outputs.a}} ${{outputs.b}} ${{outputs.c}}
outputs:
  a:
  b: {mode: mount, name: my-model, version: 3, description: weights}
  c: {type: mltable, mode: Upload, path: "azureml://datastores/${{default_datastore}}/paths/${{name}}/${{output_name}}/"}
  d: {path: "s3://bucket/runs/${{name}}/"}
  e: {mode: upload, path: "abfss://fs@lake.dfs.core.windows.net/${{output_name}}"}
`,
		want: baseSpec(func(s *job.Spec) {
			s.Command = "train ${{outputs.a}} ${{outputs.b}} ${{outputs.c}}"
			s.Outputs = map[string]job.Output{
				"a": {Type: "uri_folder", Mode: "rw_mount"},
				"b": {Type: "uri_folder", Mode: "rw_mount", Name: "my-model", Version: "3", Description: "weights"},
				"c": {Type: "mltable", Mode: "upload", Path: "azureml://datastores/${{default_datastore}}/paths/${{name}}/${{output_name}}/"},
				"d": {Type: "uri_folder", Mode: "rw_mount", Path: "s3://bucket/runs/${{name}}/"},
				"e": {Type: "uri_folder", Mode: "upload", Path: "abfss://fs@lake.dfs.core.windows.net/${{output_name}}"},
			}
		}),
	},
	{
		name: "resources, limits, queue settings",
		yml: `command: "true"
resources: {instance_count: 2, instance_type: gpu, shm_size: 8G, docker_args: --ipc=host, locations: [westus, eastus], max_instance_count: 4, properties: {a: {b: 1}}}
limits: {timeout: PT1H30M}
queue_settings: {job_tier: Standard, priority: High}
`,
		want: baseSpec(func(s *job.Spec) {
			s.Command = "true"
			s.Resources = job.Resources{InstanceCount: 2, InstanceType: "gpu", ShmSize: "8g", DockerArgs: "--ipc=host",
				Locations: []string{"westus", "eastus"}, MaxInstanceCount: 4, Properties: map[string]any{"a": map[string]any{"b": float64(1)}}}
			s.Limits = job.Limits{TimeoutSeconds: 5400}
			s.QueueSettings = job.QueueSettings{JobTier: "standard", Priority: "high"}
		}),
	},
	{
		name: "tensorflow workers default to instance count",
		yml: `command: "true"
distribution: {type: TensorFlow}
resources: {instance_count: 3}
`,
		want: baseSpec(func(s *job.Spec) {
			s.Command = "true"
			s.Resources.InstanceCount = 3
			s.Distribution = &job.Distribution{Type: "tensorflow", WorkerCount: 3}
		}),
	},
	{
		name: "pytorch default process count",
		yml:  "command: 'true'\ndistribution: {type: PyTorch}\n",
		want: baseSpec(func(s *job.Spec) {
			s.Command = "true"
			s.Distribution = &job.Distribution{Type: "pytorch"}
		}),
	},
	{
		name: "ray",
		yml:  "command: 'true'\ndistribution: {type: ray, port: 6379, include_dashboard: true, head_node_additional_args: --num-cpus 2}\n",
		want: baseSpec(func(s *job.Spec) {
			s.Command = "true"
			s.Distribution = &job.Distribution{Type: "ray", Ray: map[string]any{"port": float64(6379), "include_dashboard": true, "head_node_additional_args": "--num-cpus 2"}}
		}),
	},
	{
		name: "services and identity kept verbatim",
		yml: `command: "true"
services:
  my_jupyter: {type: jupyter_lab, nodes: all, endpoint: http://x}
  my_ssh: {type: ssh, ssh_public_keys: ssh-rsa AAA, port: 22}
identity: {type: managed_identity, client_id: abc}
`,
		want: baseSpec(func(s *job.Spec) {
			s.Command = "true"
			s.Services = map[string]any{
				"my_jupyter": map[string]any{"type": "jupyter_lab", "nodes": "all"},
				"my_ssh":     map[string]any{"type": "ssh", "ssh_public_keys": "ssh-rsa AAA", "port": float64(22)},
			}
			s.Identity = map[string]any{"type": "managed", "client_id": "abc"}
		}),
	},
	{
		name: "legacy code and read-only fields warn",
		yml: `command: "true"
code: {local_path: src}
status: Completed
id: /subscriptions/x
parent_job_name: p
`,
		files: map[string]string{"src/": ""},
		want:  baseSpec(func(s *job.Spec) { s.Command = "true"; s.Code = "$DIR/src" }),
		warnings: []string{
			"job.yml: code: {local_path: ...} is a legacy form; write code: src (line 2)",
			"job.yml: status: read-only field ignored (line 3)",
			"job.yml: id: read-only field ignored (line 4)",
			"job.yml: parent_job_name: ignored (Hangar does not nest jobs under a parent) (line 5)",
		},
	},
	{
		name: "inline environment with conda, requirements and build",
		yml: `command: "true"
environment:
  name: my-env
  version: 1
  image: python:3.11
  conda_file: env/conda.yml
  requirements: env/requirements.txt
  os_type: Linux
  user_managed_dependencies: false
  interpreter_path: /usr/bin/python3
  tags: {a: 1}
  description: d
  inference_config: {liveness_route: {path: /, port: 5001}}
`,
		files: map[string]string{"env/conda.yml": "name: x\ndependencies: [python=3.11]\n", "env/requirements.txt": "numpy\n"},
		want: baseSpec(func(s *job.Spec) {
			s.Command = "true"
			s.Environment = job.Environment{Name: "my-env", Version: "1", Image: "python:3.11",
				CondaFile: "$DIR/env/conda.yml", CondaSpec: "name: x\ndependencies: [python=3.11]\n",
				Requirements: "$DIR/env/requirements.txt", RequirementsText: "numpy\n", OSType: "linux",
				InterpreterPath: "/usr/bin/python3", Tags: map[string]string{"a": "1"}, Description: "d"}
		}),
	},
	{
		name: "inline conda mapping and build context",
		yml: `command: "true"
environment:
  build: {path: ctx}
  conda_file:
    dependencies:
      - python=3.11
`,
		files: map[string]string{"ctx/Dockerfile": "FROM scratch\n"},
		want: baseSpec(func(s *job.Spec) {
			s.Command = "true"
			s.Environment = job.Environment{BuildPath: "$DIR/ctx", DockerfilePath: "Dockerfile",
				CondaSpec: "dependencies:\n    - python=3.11\n"}
		}),
	},
	{
		name: "empty values are omitted",
		yml:  "command: run\nname:\ntags:\ninputs:\nlimits:\nenvironment:\n",
		want: baseSpec(func(s *job.Spec) { s.Command = "run" }),
	},
	{
		name: "explicit command type, name, env var null",
		yml:  "type: Command\nname: run-1_a\ncommand: run\nenvironment_variables: {A: , B: 1.50}\n",
		want: baseSpec(func(s *job.Spec) {
			s.Command = "run"
			s.Name = "run-1_a"
			s.EnvironmentVariables = map[string]string{"A": "", "B": "1.50"}
		}),
	},
}

func TestParseJobMergeKeys(t *testing.T) {
	yml := `command: "true"
resources: &r {instance_count: 2, shm_size: 1g}
distribution:
  type: mpi
  process_count_per_instance: 2
limits:
  <<: {timeout: 60}
`
	s, _, _, err := parseJob(t, yml, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Resources.InstanceCount != 2 || s.Limits.TimeoutSeconds != 60 || s.Distribution.ProcessCountPerInstance != 2 {
		t.Errorf("got %+v %+v %+v", s.Resources, s.Limits, s.Distribution)
	}
}

func TestEnvironmentRefs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"azureml:my-env:3", "my-env:3"},
		{"azureml:AzureML-sklearn-1.5@latest", "AzureML-sklearn-1.5@latest"},
		{"my-env:1.0", "my-env:1.0"},
		{"my-env@latest", "my-env@latest"},
		{"my_env", "my_env"},
		{"azureml://registries/azureml/environments/sklearn-1.5/labels/latest", "azureml://registries/azureml/environments/sklearn-1.5/labels/latest"},
		{"azureml:/subscriptions/s/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/w/environments/e/versions/1",
			"azureml:/subscriptions/s/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/w/environments/e/versions/1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, _, _, err := parseJob(t, "command: run\nenvironment: "+tt.in+"\n", nil)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, s.Environment, job.Environment{Ref: tt.want})
		})
	}
}

func TestCompute(t *testing.T) {
	tests := []struct{ in, want string }{
		{"azureml:gpu-cluster", "gpu-cluster"},
		{"gpu-cluster", "gpu-cluster"},
		{"local", "local"},
		{"azureml:local", "local"},
		{"serverless", "serverless"},
		{"azureml:serverless", "serverless"},
		{"Serverless", "serverless"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, _, _, err := parseJob(t, "command: run\ncompute: "+tt.in+"\n", nil)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, s.Compute, tt.want)
		})
	}
	s, _, _, err := parseJob(t, "command: run\n", nil)
	if err != nil || s.Compute != "" {
		t.Errorf("omitted compute: got %q, %v; want \"\"", s.Compute, err)
	}
}

func TestTimeouts(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"3600", 3600}, {"PT1H", 3600}, {"PT1H30M", 5400}, {"P1DT1S", 86401}, {"PT0.5S", 1}, {"P1W", 604800}, {"pt2m", 120},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, _, _, err := parseJob(t, "command: run\nlimits: {timeout: "+tt.in+"}\n", nil)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, s.Limits.TimeoutSeconds, tt.want)
		})
	}
}

func TestDefaultExperiment(t *testing.T) {
	tests := []struct{ dir, want string }{
		{"/home/me/my project", "my_project"},
		{"/home/me/.hidden", "hidden"},
		{"/", "Default"},
		{"/x/ünï", "n_"},
		{"/x/train-v2.1", "train-v2.1"},
	}
	for _, tt := range tests {
		diff(t, defaultExperiment(tt.dir), tt.want)
	}
}

func TestParseJobFile(t *testing.T) {
	dir := writeTree(t, map[string]string{"jobs/job.yml": "command: python ${{inputs.x}}\ninputs: {x: {type: uri_file, path: ../data.csv}}\n", "data.csv": "1"})
	s, _, err := ParseJobFile(filepath.Join(dir, "jobs", "job.yml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, s.Inputs["x"].Path, filepath.Join(dir, "data.csv"))
	diff(t, s.ExperimentName, "jobs")

	_, _, err = ParseJobFile(filepath.Join(dir, "nope.yml"), nil)
	checkErr(t, err, "nope.yml: read: no such file or directory")
}

func TestErrorListAs(t *testing.T) {
	_, _, _, err := parseJob(t, "commnd: x\nlimits: {timeout: -1}\n", nil)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("want 3 errors, got %v", err)
	}
	var first *Error
	if !errors.As(err, &first) || first.File != "job.yml" {
		t.Fatalf("errors.As *Error: %v", first)
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		"job.yml: command: required",
		`job.yml: commnd: unknown field; did you mean "command"? (line 1)`,
		"job.yml: limits.timeout: expected integer seconds > 0, got -1 (line 2)",
	}
	diff(t, lines, want)
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yml", Path: "x.y", Line: 3, Msg: "bad"}, "a.yml: x.y: bad (line 3)"},
		{Error{File: "a.yml", Path: "x", Msg: "required"}, "a.yml: x: required"},
		{Error{File: "a.yml", Line: 4, Msg: "malformed YAML: m"}, "a.yml: line 4: malformed YAML: m"},
		{Error{File: "a.yml", Msg: "read: denied"}, "a.yml: read: denied"},
	}
	for _, tt := range tests {
		diff(t, tt.e.Error(), tt.want)
	}
}
