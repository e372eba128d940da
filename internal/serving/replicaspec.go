package serving

import (
	"maps"
	"path"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
)

// ReplicaCommand is the command of a code_configuration replica, and of a no-code MLflow
// deployment's: Hangar's scoring server (the supervisor writes it and names it in
// $HANGAR_SCORING_SERVER) with the model's folder.
const ReplicaCommand = `exec python3 "$HANGAR_SCORING_SERVER"`

// ModelInput is the name of a replica's model input (AZUREML_MODEL_DIR points at it).
const ModelInput = "model"

// ReplicaSpec is the run that serves one replica of a deployment: its code, environment and
// variables, its model as a uri_folder input (manifest given: fetched and cached per node like
// any input), on compute (the deployment's target, resolved by the caller).
func ReplicaSpec(d Deployment, compute, modelManifest string) job.Spec {
	sp := job.Spec{
		Type:           "command",
		DisplayName:    d.Endpoint + "/" + d.Name,
		ExperimentName: "endpoint-" + d.Endpoint,
		Meta: asset.Meta{
			Description: "replica of deployment " + d.Name + " of online endpoint " + d.Endpoint,
			Tags:        map[string]string{"hangar.endpoint": d.Endpoint, "hangar.deployment": d.Name},
		},
		CodeSnapshot:         d.CodeSnapshot,
		Environment:          d.Environment,
		Compute:              compute,
		Resources:            job.Resources{InstanceType: d.InstanceType, InstanceCount: 1},
		EnvironmentVariables: maps.Clone(d.EnvironmentVariables),
		Serve: &job.Serve{Endpoint: d.Endpoint, Deployment: d.Name, ScoringScript: d.ScoringScript,
			Probe: d.Readiness.Path},
	}
	if sp.EnvironmentVariables == nil {
		sp.EnvironmentVariables = map[string]string{}
	}
	cmd := ReplicaCommand
	if d.ScoringScript == "" && !d.ServesMLflowModel() {
		cmd = d.Command
	}
	sp.Serve.MLflow = d.ServesMLflowModel()
	if d.Inference != nil {
		sp.Serve.Port = d.Inference.Port
		if d.Inference.ReadinessPath != "" {
			sp.Serve.Probe = d.Inference.ReadinessPath
		}
	}
	if modelManifest != "" {
		sp.Inputs = map[string]job.Input{ModelInput: {Type: job.URIFolder, Manifest: modelManifest}}
		// The supervisor sets AZUREML_MODEL_DIR so that the files sit where Azure puts them.
		sp.Serve.ModelInput, sp.Serve.ModelFolder = ModelInput, d.Model.Folder
	}
	if d.ServesByEntrypoint() {
		sp.Serve.Entrypoint = true
		if modelManifest != "" {
			sp.Serve.ModelMount = ModelMountPath(d)
		}
	}
	sp.Command = cmd
	if sp.Serve.Probe == "" {
		sp.Serve.Probe = "/"
	}
	return sp
}

// AzureModelRoot is where Azure mounts a deployment's models inside its container.
const AzureModelRoot = "/var/azureml-app/azureml-models"

// ModelMountPath is AZUREML_MODEL_DIR inside the container of an image that serves by its own
// entrypoint: model_mount_path, else Azure's /var/azureml-app/azureml-models/<name>/<version>
// (an inline model without a name takes the deployment's, and version 1).
func ModelMountPath(d Deployment) string {
	if d.ModelMountPath != "" {
		return d.ModelMountPath
	}
	name, version := d.Model.Name, d.Model.Version
	if name == "" {
		name = d.Name
	}
	if version == "" {
		version = "1"
	}
	return path.Join(AzureModelRoot, name, version)
}
