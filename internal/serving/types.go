package serving

import (
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
)

// Auth modes of an endpoint (`auth_mode`).
const (
	AuthKey      = "key"       // a long-lived key (primary or secondary), regenerated on demand
	AuthAMLToken = "aml_token" // a short-lived token from `get-credentials`
)

// Endpoint is an online endpoint: a stable scoring URI whose traffic is split between its
// deployments.
type Endpoint struct {
	Name string `json:"name"`
	asset.Meta
	// AuthMode is AuthKey (default) or AuthAMLToken.
	AuthMode string `json:"auth_mode"`
	// Compute is the target its deployments run on unless they name their own (the Kubernetes
	// endpoint schema's `compute`, azureml: prefix removed); "" is the workspace default.
	Compute string `json:"compute,omitempty"`
	// Traffic is the percentage of requests each deployment gets (sums to 100, or is empty).
	Traffic map[string]int `json:"traffic,omitempty"`
	// MirrorTraffic copies this percentage of requests to a deployment, responses dropped.
	MirrorTraffic map[string]int `json:"mirror_traffic,omitempty"`
	// Kept as given: public_network_access, identity.
	Extra map[string]any `json:"extra,omitempty"`
}

// Deployment is a model served by replicas behind an endpoint.
type Deployment struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint_name"`
	asset.Meta
	// Model is what the replicas load, mounted at AZUREML_MODEL_DIR.
	Model ModelRef `json:"model"`
	// Code and ScoringScript are `code_configuration`: the replicas run Hangar's scoring server,
	// which imports the script and calls its init() and run(raw_data). Code is the client's
	// absolute path until uploaded; CodeSnapshot its manifest after.
	Code          string `json:"code,omitempty"`
	CodeSnapshot  string `json:"code_snapshot,omitempty"`
	ScoringScript string `json:"scoring_script,omitempty"`
	// Environment is the replicas' environment; with no code_configuration its image (or
	// Command) serves on $PORT itself (Inference says where).
	Environment job.Environment `json:"environment"`
	// Command is a Hangar extension: the command a custom deployment runs (default: the
	// image's own entrypoint).
	Command              string            `json:"command,omitempty"`
	Inference            *InferenceConfig  `json:"inference_config,omitempty"`
	EnvironmentVariables map[string]string `json:"environment_variables,omitempty"`
	InstanceType         string            `json:"instance_type,omitempty"`
	InstanceCount        int               `json:"instance_count"`
	// Compute is a Hangar extension: this deployment's target, over the endpoint's.
	Compute string          `json:"compute,omitempty"`
	Scale   ScaleSettings   `json:"scale_settings"`
	Request RequestSettings `json:"request_settings"`
	// Liveness failing FailureThreshold times restarts a replica; Readiness failing takes it
	// out of the rotation until it passes SuccessThreshold times.
	Liveness  Probe `json:"liveness_probe"`
	Readiness Probe `json:"readiness_probe"`
	// ModelMountPath is `model_mount_path`: where an image that serves by its own entrypoint
	// finds the model (AZUREML_MODEL_DIR); "" is Azure's
	// /var/azureml-app/azureml-models/<name>/<version>.
	ModelMountPath string `json:"model_mount_path,omitempty"`
	// Kept as given: app_insights_enabled, egress_public_network_access, data_collector, ...
	Extra map[string]any `json:"extra,omitempty"`
}

// ModelRef is a deployment's `model`: a registered model (Ref: "name:version" or
// "name@latest") or an inline one (Path: a local path until uploaded, then Manifest).
type ModelRef struct {
	Ref      string `json:"ref,omitempty"`
	Path     string `json:"path,omitempty"`
	Manifest string `json:"manifest,omitempty"`
	Type     string `json:"type,omitempty"` // custom_model (default), mlflow_model, triton_model
	// Name and Version are an inline model's own (optional): what it is registered as.
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	// Folder is the model folder's name ("" for one file): its files are at
	// $AZUREML_MODEL_DIR/<Folder>, as on Azure (the registered version's, or an inline folder's).
	Folder string `json:"folder,omitempty"`
}

// ServesByEntrypoint says the deployment's image serves by its own ENTRYPOINT/CMD: it has an
// inference_config and neither a scoring script nor a command (Azure's custom containers).
func (d Deployment) ServesByEntrypoint() bool {
	return d.Inference != nil && d.ScoringScript == "" && d.Command == ""
}

// mlflowModel is model.MLflowModel (serving does not import model).
const mlflowModel = "mlflow_model"

// ServesMLflowModel says the deployment is a no-code MLflow deployment: an MLflow model with
// no scoring script, no command and no image that serves by its entrypoint. Its replicas run
// Hangar's scoring server with the built-in MLflow scorer (serving/scoring).
func (d Deployment) ServesMLflowModel() bool {
	return d.Model.Type == mlflowModel && d.ScoringScript == "" && d.Command == "" && d.Inference == nil
}

// InferenceConfig is an environment's `inference_config` for images that serve themselves.
type InferenceConfig struct {
	LivenessPath  string `json:"liveness_path,omitempty"`
	ReadinessPath string `json:"readiness_path,omitempty"`
	ScoringPath   string `json:"scoring_path,omitempty"`
	Port          int    `json:"port,omitempty"`
}

// Scale types (`scale_settings.type`).
const (
	ScaleDefault           = "default"            // InstanceCount replicas
	ScaleTargetUtilization = "target_utilization" // between MinInstances and MaxInstances
)

// ScaleSettings is `scale_settings`. With target_utilization the replica count follows the
// concurrent requests: TargetUtilization percent of max_concurrent_requests_per_instance per
// replica, between MinInstances (0: scale to zero) and MaxInstances.
type ScaleSettings struct {
	Type              string `json:"type"`
	MinInstances      int    `json:"min_instances"`
	MaxInstances      int    `json:"max_instances,omitempty"`
	PollingInterval   int    `json:"polling_interval,omitempty"` // seconds
	TargetUtilization int    `json:"target_utilization_percentage,omitempty"`
	// ScaleDownDelay is a Hangar extension: how long (seconds) a replica stays idle before it
	// is removed (and before the last one goes, with MinInstances 0).
	ScaleDownDelay int `json:"scale_down_delay,omitempty"`
}

// RequestSettings is `request_settings`.
type RequestSettings struct {
	RequestTimeoutMS                 int `json:"request_timeout_ms"`
	MaxConcurrentRequestsPerInstance int `json:"max_concurrent_requests_per_instance"`
	MaxQueueWaitMS                   int `json:"max_queue_wait_ms"`
}

// Probe is `liveness_probe` / `readiness_probe`, in seconds as in the schema.
type Probe struct {
	InitialDelay     int    `json:"initial_delay"`
	Period           int    `json:"period"`
	Timeout          int    `json:"timeout"`
	SuccessThreshold int    `json:"success_threshold"`
	FailureThreshold int    `json:"failure_threshold"`
	Path             string `json:"path,omitempty"` // Hangar: the scoring server's "/" unless Inference says
}
