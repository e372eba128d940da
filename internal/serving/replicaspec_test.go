package serving

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// A replica's Serve says how its supervisor starts it: the scoring server, a command, or an
// image's own entrypoint with the model mounted where Azure mounts it.
func TestReplicaSpecServe(t *testing.T) {
	ic := &InferenceConfig{LivenessPath: "/live", ReadinessPath: "/ready", ScoringPath: "/predict", Port: 8501}
	base := Deployment{Name: "blue", Endpoint: "ep", Environment: job.Environment{Image: "tfs:1"}, Inference: ic,
		Model: ModelRef{Ref: "hpt:3", Name: "hpt", Version: "3", Folder: "half_plus_two"}}
	for _, tc := range []struct {
		name    string
		edit    func(d *Deployment)
		model   string
		command string
		want    job.Serve
	}{
		{"entrypoint, registered model", func(*Deployment) {}, "sha", "",
			job.Serve{Endpoint: "ep", Deployment: "blue", Probe: "/ready", Port: 8501, ModelInput: ModelInput,
				ModelFolder: "half_plus_two", Entrypoint: true, ModelMount: "/var/azureml-app/azureml-models/hpt/3"}},
		{"entrypoint, model_mount_path", func(d *Deployment) { d.ModelMountPath = "/models" }, "sha", "",
			job.Serve{Endpoint: "ep", Deployment: "blue", Probe: "/ready", Port: 8501, ModelInput: ModelInput,
				ModelFolder: "half_plus_two", Entrypoint: true, ModelMount: "/models"}},
		{"entrypoint, inline model without a name", func(d *Deployment) { d.Model = ModelRef{Path: "/m"} }, "sha", "",
			job.Serve{Endpoint: "ep", Deployment: "blue", Probe: "/ready", Port: 8501, ModelInput: ModelInput,
				Entrypoint: true, ModelMount: "/var/azureml-app/azureml-models/blue/1"}},
		{"entrypoint, no model", func(d *Deployment) { d.Model = ModelRef{} }, "", "",
			job.Serve{Endpoint: "ep", Deployment: "blue", Probe: "/ready", Port: 8501, Entrypoint: true}},
		{"no-code MLflow model", func(d *Deployment) {
			d.Inference, d.Environment, d.Model.Type = nil, job.Environment{}, "mlflow_model"
			d.Readiness.Path = "/"
		}, "sha", ReplicaCommand,
			job.Serve{Endpoint: "ep", Deployment: "blue", Probe: "/", ModelInput: ModelInput, ModelFolder: "half_plus_two", MLflow: true}},
		{"MLflow model with a scoring script", func(d *Deployment) {
			d.Inference, d.Model.Type, d.ScoringScript = nil, "mlflow_model", "score.py"
			d.Readiness.Path = "/"
		}, "sha", ReplicaCommand,
			job.Serve{Endpoint: "ep", Deployment: "blue", Probe: "/", ModelInput: ModelInput, ModelFolder: "half_plus_two", ScoringScript: "score.py"}},
		{"command", func(d *Deployment) { d.Command = "serve --port $PORT" }, "sha", "serve --port $PORT",
			job.Serve{Endpoint: "ep", Deployment: "blue", Probe: "/ready", Port: 8501, ModelInput: ModelInput, ModelFolder: "half_plus_two"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base
			tc.edit(&d)
			sp := ReplicaSpec(d, "local", tc.model)
			if diff := cmp.Diff(tc.want, *sp.Serve); diff != "" {
				t.Errorf("Serve (-want +got):\n%s", diff)
			}
			if sp.Command != tc.command {
				t.Errorf("Command = %q, want %q", sp.Command, tc.command)
			}
		})
	}
}
