package serving

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
)

func intp(v int) *int { return &v }

func invokeDeployment() BatchDeployment {
	st := DefaultBatchSettings()
	st.MiniBatchBytes, st.MiniBatchSize = 4096, 0 // a size: a count override replaces it
	return BatchDeployment{Name: "rows", Endpoint: "ep", ScoringScript: "score.py", Compute: "pool",
		InstanceCount: 2, Model: ModelRef{Folder: "model"}, Settings: st,
		Meta: asset.Meta{Tags: map[string]string{"team": "ml"}}, Environment: job.Environment{Image: "python:3"}}
}

var folder = job.Input{Type: job.URIFolder, Manifest: "sha-data"}

// Each override lands in the job's settings, and only there: the deployment given is a copy.
func TestBatchInvokeSpecAppliesOverrides(t *testing.T) {
	d := invokeDeployment()
	before := d
	inv := BatchInvocation{BatchOverrides: BatchOverrides{
		MiniBatchSize: intp(20), InstanceCount: intp(5), OutputFileName: "out.csv", ErrorThreshold: intp(3),
		MaxRetries: intp(0), Timeout: intp(90), LoggingLevel: "DEBUG", JobName: "score-1", ExperimentName: "nightly",
		OutputPath: "azureml://datastores/workspaceblobstore/paths/ep/run1",
	}}
	sp, err := BatchInvokeSpec(d, "sha-model", folder, inv)
	if err != nil {
		t.Fatal(err)
	}
	want := &job.ParallelRun{InputData: BatchInput, AppendRowTo: BatchOutput, EntryScript: "score.py", MiniBatchSize: 20,
		MaxConcurrencyPerInstance: 1, MiniBatchErrorThreshold: -1, ErrorThreshold: 3, MaxRetries: 0, TimeoutSeconds: 90,
		LoggingLevel: "debug", OutputFileName: "out.csv", ModelInput: ModelInput, ModelFolder: "model", BIOutput: BatchOutput}
	if diff := cmp.Diff(want, sp.Parallel); diff != "" {
		t.Errorf("parallel settings (-want +got):\n%s", diff)
	}
	if got := sp.Outputs[BatchOutput]; got != (job.Output{Type: job.URIFolder, Path: inv.OutputPath}) {
		t.Errorf("output score %+v, want a uri_folder at %s", got, inv.OutputPath)
	}
	if sp.Resources.InstanceCount != 5 || sp.Name != "score-1" || sp.ExperimentName != "nightly" || sp.Inputs[BatchInput] != folder {
		t.Errorf("instances %d, name %q, experiment %q, input %+v", sp.Resources.InstanceCount, sp.Name, sp.ExperimentName, sp.Inputs[BatchInput])
	}
	if diff := cmp.Diff(before, d); diff != "" {
		t.Errorf("the deployment changed (-before +after):\n%s", diff)
	}
}

// Without overrides an invoke is the deployment's job, as before overrides existed.
func TestBatchInvokeSpecWithoutOverridesIsTheDeployments(t *testing.T) {
	d := invokeDeployment()
	got, err := BatchInvokeSpec(d, "sha-model", folder, BatchInvocation{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(BatchJobSpec(d, "sha-model", folder), got); diff != "" {
		t.Errorf("(-deployment's job +invoked):\n%s", diff)
	}
}

// Azure's invocation file: one data input of any name, the output score at a datastore path.
func TestBatchInvokeSpecFromAnInvocationFile(t *testing.T) {
	inv := BatchInvocation{
		Inputs:  map[string]job.Input{"heart_dataset": {Type: job.URIFile, Path: "azureml:heart@latest"}},
		Outputs: map[string]job.Output{BatchOutput: {Type: job.URIFolder, Mode: "upload", Path: "azureml://datastores/workspaceblobstore/paths/x"}},
	}
	sp, err := BatchInvokeSpec(invokeDeployment(), "", job.Input{}, inv)
	if err != nil {
		t.Fatal(err)
	}
	if in := sp.Inputs[BatchInput]; in.Path != "azureml:heart@latest" || in.Type != job.URIFile {
		t.Errorf("input_data %+v, want the file's input", in)
	}
	if o := sp.Outputs[BatchOutput]; o.Path != "azureml://datastores/workspaceblobstore/paths/x" || o.Mode != "upload" {
		t.Errorf("score %+v, want the file's path", o)
	}
	if p, field := inv.OutputPathField(); p != "azureml://datastores/workspaceblobstore/paths/x" || field != "outputs.score.path" {
		t.Errorf("OutputPathField = %q, %q", p, field)
	}
	untyped := BatchInvocation{Inputs: map[string]job.Input{"x": {Manifest: "sha-data"}}}
	if sp, err := BatchInvokeSpec(invokeDeployment(), "", job.Input{}, untyped); err != nil || sp.Inputs[BatchInput] != folder {
		t.Errorf("an input without a type: %+v, %v; want a uri_folder", sp.Inputs[BatchInput], err)
	}
	inv.OutputPath = "azureml://datastores/workspaceblobstore/paths/flag"
	sp, _ = BatchInvokeSpec(invokeDeployment(), "", job.Input{}, inv)
	if o := sp.Outputs[BatchOutput]; o.Path != inv.OutputPath {
		t.Errorf("score %+v: --output-path should win over the file's", o)
	}
	if _, field := inv.OutputPathField(); field != "output_path (--output-path)" {
		t.Errorf("OutputPathField names %q", field)
	}
}

// Each bad value is refused naming its field, the flag that sets it, and what was expected.
func TestBatchInvokeSpecRefusals(t *testing.T) {
	summary := invokeDeployment()
	summary.Settings.OutputAction = OutputSummaryOnly
	for _, tc := range []struct {
		name  string
		d     BatchDeployment
		input job.Input
		inv   BatchInvocation
		want  string
	}{
		{"mini-batch size 0", invokeDeployment(), folder, BatchInvocation{BatchOverrides: BatchOverrides{MiniBatchSize: intp(0)}},
			"mini_batch_size (--mini-batch-size): expected an integer of at least 1, got 0"},
		{"no instances", invokeDeployment(), folder, BatchInvocation{BatchOverrides: BatchOverrides{InstanceCount: intp(-2)}},
			"compute.instance_count (--instance-count): expected an integer of at least 1, got -2"},
		{"error threshold", invokeDeployment(), folder, BatchInvocation{BatchOverrides: BatchOverrides{ErrorThreshold: intp(-5)}},
			"error_threshold: expected an integer of at least -1, got -5"},
		{"retries", invokeDeployment(), folder, BatchInvocation{BatchOverrides: BatchOverrides{MaxRetries: intp(-1)}},
			"retry_settings.max_retries: expected an integer of at least 0"},
		{"timeout", invokeDeployment(), folder, BatchInvocation{BatchOverrides: BatchOverrides{Timeout: intp(0)}},
			"retry_settings.timeout: expected an integer of at least 1"},
		{"file name with a folder", invokeDeployment(), folder, BatchInvocation{BatchOverrides: BatchOverrides{OutputFileName: "a/b.csv"}},
			`output_file_name: "a/b.csv": expected a file name, without folders`},
		{"file name of summary_only", summary, folder, BatchInvocation{BatchOverrides: BatchOverrides{OutputFileName: "b.csv"}},
			"output_file_name: deployment rows writes no row file (its output_action is summary_only)"},
		{"logging level", invokeDeployment(), folder, BatchInvocation{BatchOverrides: BatchOverrides{LoggingLevel: "loud"}},
			`logging_level: expected one of debug, info, warning, got "loud"`},
		{"job name", invokeDeployment(), folder, BatchInvocation{BatchOverrides: BatchOverrides{JobName: "-x"}},
			`job_name (--job-name): "-x" must start with a letter or digit`},
		{"no input", invokeDeployment(), job.Input{}, BatchInvocation{}, "input: required"},
		{"client path", invokeDeployment(), job.Input{Path: "/home/me/x"}, BatchInvocation{}, "input: /home/me/x is a path on the client"},
		{"mltable", invokeDeployment(), job.Input{Type: job.MLTable, Manifest: "m"}, BatchInvocation{}, `input: type "mltable"; expected uri_folder or uri_file`},
		{"input and inputs", invokeDeployment(), folder, BatchInvocation{Inputs: map[string]job.Input{"a": folder}},
			"input: give --input or the file's inputs, not both"},
		{"two inputs", invokeDeployment(), job.Input{}, BatchInvocation{Inputs: map[string]job.Input{"b": folder, "a": folder}},
			"inputs: a model deployment scores one input, got 2 (a, b)"},
		{"literal input", invokeDeployment(), job.Input{}, BatchInvocation{Inputs: map[string]job.Input{"a": folder, "score_mode": {Type: job.InputString, Value: "append"}}},
			"inputs.score_mode: a model deployment scores one uri_folder or uri_file input and takes no string value"},
		{"file input without a path", invokeDeployment(), job.Input{}, BatchInvocation{Inputs: map[string]job.Input{"a": {Type: job.URIFolder}}},
			"inputs.a: required"},
		{"another output", invokeDeployment(), folder, BatchInvocation{Outputs: map[string]job.Output{"scores": {}}},
			"outputs.scores: a model deployment has one output, score"},
		{"output type", invokeDeployment(), folder, BatchInvocation{Outputs: map[string]job.Output{"score": {Type: job.URIFile}}},
			`outputs.score.type: "uri_file"; the output of a model deployment is a uri_folder`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BatchInvokeSpec(tc.d, "sha", tc.input, tc.inv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// --set takes az's keys (and Hangar's names for the same fields), each value checked as text.
func TestSetBatchOverride(t *testing.T) {
	for _, tc := range []struct {
		sets    []string
		want    BatchOverrides
		wantErr string
	}{
		{sets: []string{"output_file_name=predictions.csv"}, want: BatchOverrides{OutputFileName: "predictions.csv"}},
		{sets: []string{"mini_batch_size=20", "compute.instance_count=5"}, want: BatchOverrides{MiniBatchSize: intp(20), InstanceCount: intp(5)}},
		{sets: []string{"instance_count=3", "max_retries=0", "timeout=45"}, want: BatchOverrides{InstanceCount: intp(3), MaxRetries: intp(0), Timeout: intp(45)}},
		{sets: []string{"retry_settings.max_retries=2", "retry_settings.timeout=30", "error_threshold=-1", "logging_level=debug"},
			want: BatchOverrides{MaxRetries: intp(2), Timeout: intp(30), ErrorThreshold: intp(-1), LoggingLevel: "debug"}},
		{sets: []string{`output_file_name="out file.csv"`, "job_name='j1'", "experiment_name=exp"},
			want: BatchOverrides{OutputFileName: "out file.csv", JobName: "j1", ExperimentName: "exp"}},
		{sets: []string{"output_dataset.datastore_id=azureml:shared", "output_dataset.path=/preds/"},
			want: BatchOverrides{OutputPath: "azureml://datastores/shared/paths/preds/"}},
		{sets: []string{"output_dataset.path=preds"}, want: BatchOverrides{OutputPath: "azureml://datastores/workspaceblobstore/paths/preds"}},
		{sets: []string{"output_dataset.datastore_id=/subscriptions/s/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/w/datastores/blobs"},
			want: BatchOverrides{OutputPath: "azureml://datastores/blobs/paths/"}},
		{sets: []string{"mini_batch_size=many"}, wantErr: `expected an integer, got "many"`},
		{sets: []string{"output_file_name="}, wantErr: "expected a value, got nothing"},
		{sets: []string{"output_dataset.datastore_id=azureml:"}, wantErr: `expected a datastore (azureml:<name>), got "azureml:"`},
		{sets: []string{"settings.mini_batch_size=2"}, wantErr: "not a field an invoke sets (it takes mini_batch_size, compute.instance_count, output_file_name"},
	} {
		t.Run(strings.Join(tc.sets, " "), func(t *testing.T) {
			var got BatchOverrides
			var err error
			for _, kv := range tc.sets {
				k, v, _ := strings.Cut(kv, "=")
				if err = SetBatchOverride(&got, k, v); err != nil {
					break
				}
			}
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}
