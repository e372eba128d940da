package spec

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
)

// Azure's invocation files (the batch examples' inputs.yml): inputs and outputs as a job's, a
// local path made absolute against the file's folder, and the fields --set may name.
func TestParseBatchInvokeFile(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"data/unlabeled/a.csv": "x\n",
		"inputs.yml": "inputs:\n  input_data:\n    type: uri_folder\n    path: data/unlabeled\n" +
			"outputs:\n  score:\n    type: uri_folder\n    mode: upload\n    path: azureml://datastores/workspaceblobstore/paths/ep/out\n" +
			"mini_batch_size: 20\ncompute:\n  instance_count: 2\noutput_file_name: p.csv\n" +
			"retry_settings: {max_retries: 0, timeout: 45}\nerror_threshold: -1\nlogging_level: debug\njob_name: j1\n",
		"remote.yml": "inputs:\n  heart:\n    type: uri_folder\n    path: azureml:heart-classifier-train@latest\n" +
			"output_dataset:\n  path: preds/\n  datastore_id: azureml:workspaceblobstore\n",
	})
	inv, warnings, err := ParseBatchInvokeFile(filepath.Join(dir, "inputs.yml"))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("inputs.yml: %v, warnings %v", err, warnings)
	}
	n20, n2, n0, n45, m1 := 20, 2, 0, 45, -1
	want := &serving.BatchInvocation{
		Inputs:  map[string]job.Input{"input_data": {Type: job.URIFolder, Mode: "ro_mount", Path: filepath.Join(dir, "data", "unlabeled")}},
		Outputs: map[string]job.Output{"score": {Type: job.URIFolder, Mode: "upload", Path: "azureml://datastores/workspaceblobstore/paths/ep/out"}},
		BatchOverrides: serving.BatchOverrides{MiniBatchSize: &n20, InstanceCount: &n2, OutputFileName: "p.csv", MaxRetries: &n0,
			Timeout: &n45, ErrorThreshold: &m1, LoggingLevel: "debug", JobName: "j1"},
	}
	if diff := cmp.Diff(want, inv); diff != "" {
		t.Errorf("inputs.yml (-want +got):\n%s", diff)
	}
	inv, _, err = ParseBatchInvokeFile(filepath.Join(dir, "remote.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if in := inv.Inputs["heart"]; in.Path != "azureml:heart-classifier-train@latest" || inv.OutputPath != "azureml://datastores/workspaceblobstore/paths/preds/" {
		t.Errorf("remote.yml: input %+v, output path %q", in, inv.OutputPath)
	}
}

// What the file gets wrong is named by file, field and line.
func TestParseBatchInvokeFileErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"inputs:\n  input_data: {type: uri_folder, path: missing}\n", "x.yml: inputs.input_data.path: missing does not exist (line 2)"},
		{"mini_batch_size: many\n", `x.yml: mini_batch_size: expected an integer, got "many" (line 1)`},
		{"compute: {instance_count: 2, target: azureml:c}\n", "compute.target"},
		{"outputs:\n  score: {path: /tmp/out}\n", "x.yml: outputs.score.path: expected an azureml://datastores/<datastore>/paths/<path> URI or an object store's URI"},
		{"deployment_name: d\n", "deployment_name"},
	} {
		dir := writeTree(t, map[string]string{"x.yml": tc.yaml})
		_, _, err := ParseBatchInvokeFile(filepath.Join(dir, "x.yml"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
