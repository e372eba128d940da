package job

import (
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// Spec is a command job as the user described it, after YAML decoding, defaults and validation.
// The CLI fills CodeSnapshot and each data input's Manifest after uploading; the server stores
// the whole Spec with the run. Field names follow the Azure ML CLI v2 schema (SPEC.md §2).
type Spec struct {
	Type           string `json:"type"` // "command"
	Name           string `json:"name,omitempty"`
	DisplayName    string `json:"display_name,omitempty"`
	ExperimentName string `json:"experiment_name,omitempty"`
	asset.Meta

	Command string `json:"command"`
	// Code is the code folder (or a single code file) as written in the YAML, resolved to an
	// absolute local path on the client. Empty means no code (the working directory starts empty).
	Code string `json:"code,omitempty"`
	// AdditionalIncludes are a component's additional_includes, absolute local paths on the
	// client: files and folders the code snapshot holds at its root under their own names.
	AdditionalIncludes []string `json:"additional_includes,omitempty"`
	// CodeSnapshot is the hash of the uploaded snapshot manifest (set by the client).
	CodeSnapshot string `json:"code_snapshot,omitempty"`

	Environment          Environment       `json:"environment"`
	Compute              string            `json:"compute,omitempty"` // bare target name; "" = workspace default
	Inputs               map[string]Input  `json:"inputs,omitempty"`
	Outputs              map[string]Output `json:"outputs,omitempty"`
	EnvironmentVariables map[string]string `json:"environment_variables,omitempty"`
	Resources            Resources         `json:"resources"`
	Limits               Limits            `json:"limits"`
	Distribution         *Distribution     `json:"distribution,omitempty"`
	QueueSettings        QueueSettings     `json:"queue_settings"`
	// Services and Identity are accepted for compatibility and kept verbatim.
	Services map[string]any `json:"services,omitempty"`
	Identity map[string]any `json:"identity,omitempty"`
	// Serve marks an online deployment's replica (set by Hangar, never by a job file).
	Serve *Serve `json:"serve,omitempty"`
	// Parallel holds a parallel job's settings (Type "parallel", or a command job made from one).
	Parallel *ParallelRun `json:"parallel,omitempty"`
	// Sweep holds a sweep job's settings (Type "sweep": the run is the sweep's parent).
	Sweep *SweepRun `json:"sweep,omitempty"`
	// Pipeline holds a pipeline job's steps (Type "pipeline": the run is the pipeline's parent).
	Pipeline *PipelineRun `json:"pipeline,omitempty"`
	// Import makes the run a data import (set by Hangar from hangar data import, never by a job
	// file): its supervisor reads a connection's source instead of running a command.
	Import *Import `json:"import,omitempty"`
}

// Serve is what makes a run an online deployment's replica (design 0014): its supervisor gives
// the command a free port ($PORT) and, for a scoring script, Hangar's scoring server
// ($HANGAR_SCORING_SERVER), and reports the address it answers at once Probe answers 200.
type Serve struct {
	Endpoint   string `json:"endpoint"`
	Deployment string `json:"deployment"`
	// ScoringScript is code_configuration.scoring_script, relative to the code folder.
	ScoringScript string `json:"scoring_script,omitempty"`
	// MLflow says the replica serves an MLflow model with no scoring script (a no-code
	// deployment): the scoring server runs Hangar's built-in MLflow scorer on the model.
	MLflow bool `json:"mlflow,omitempty"`
	// Probe is the path whose 200 answer means the replica is ready ("/" by default).
	Probe string `json:"probe,omitempty"`
	// Port is a fixed port (an image's inference_config); 0 lets the supervisor pick a free one.
	Port int `json:"port,omitempty"`
	// ModelInput names the input holding the model and ModelFolder the folder name its files
	// sit under in AZUREML_MODEL_DIR ("" : directly), as Azure lays a model out.
	ModelInput  string `json:"model_input,omitempty"`
	ModelFolder string `json:"model_folder,omitempty"`
	// Entrypoint says the image serves by its own ENTRYPOINT/CMD (an inference_config with no
	// command and no scoring script): the supervisor runs the image without a command, in a
	// network of its own with Port published on a free port of the node, the model mounted at
	// ModelMount (AZUREML_MODEL_DIR inside the container).
	Entrypoint bool   `json:"entrypoint,omitempty"`
	ModelMount string `json:"model_mount,omitempty"`
}

// Environment says how the code's dependencies are provided. Exactly one of Ref, or the
// inline fields, is set.
type Environment struct {
	// Ref names a registered environment: "name", "name:version" or "name@latest" (azureml: prefix removed).
	Ref string `json:"ref,omitempty"`

	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	Image   string `json:"image,omitempty"`
	// CondaFile is an absolute local path on the client, or empty; CondaSpec holds the
	// file's (or the inline object's) YAML text once read.
	CondaFile string `json:"conda_file,omitempty"`
	CondaSpec string `json:"conda_spec,omitempty"`
	// Requirements is a pip requirements file (Hangar extension), absolute local path;
	// RequirementsText holds its content once read.
	Requirements     string `json:"requirements,omitempty"`
	RequirementsText string `json:"requirements_text,omitempty"`
	// Build is a Docker build context (path, dockerfile_path).
	BuildPath      string `json:"build_path,omitempty"`
	DockerfilePath string `json:"dockerfile_path,omitempty"`
	// UserManagedDependencies and InterpreterPath select the user's own interpreter as is.
	UserManagedDependencies bool              `json:"user_managed_dependencies,omitempty"`
	InterpreterPath         string            `json:"interpreter_path,omitempty"`
	OSType                  string            `json:"os_type,omitempty"`
	Description             string            `json:"description,omitempty"`
	Tags                    map[string]string `json:"tags,omitempty"`
}

// IsEmpty reports whether no environment was given at all (the host environment is used).
func (e Environment) IsEmpty() bool {
	return e.Ref == "" && e.Image == "" && e.CondaFile == "" && e.CondaSpec == "" &&
		e.Requirements == "" && e.RequirementsText == "" && e.BuildPath == "" &&
		!e.UserManagedDependencies && e.InterpreterPath == ""
}

// Input kinds: literals carry Value; data inputs carry Path (and, once uploaded, Manifest).
const (
	InputString  = "string"
	InputInteger = "integer"
	InputNumber  = "number"
	InputBoolean = "boolean"

	URIFile     = "uri_file"
	URIFolder   = "uri_folder"
	MLTable     = "mltable"
	MLflowModel = "mlflow_model"
	CustomModel = "custom_model"
	TritonModel = "triton_model"
)

// Input is one entry of `inputs:`.
type Input struct {
	Type string `json:"type"`
	// Value is the literal's value as text (for literal types).
	Value string `json:"value,omitempty"`
	// Optional marks an input that may be absent ($[[ ]] segments drop it).
	Optional bool `json:"optional,omitempty"`
	// Path is the data input's location: an absolute local path on the client, or a URI
	// (http(s)://, azureml://...).
	Path string `json:"path,omitempty"`
	// Mode: ro_mount (default), download, direct, eval_mount, eval_download.
	Mode string `json:"mode,omitempty"`
	// Datastore is accepted for compatibility.
	Datastore   string `json:"datastore,omitempty"`
	Description string `json:"description,omitempty"`
	// Manifest is the hash of the uploaded manifest of a local path (set by the client).
	Manifest string `json:"manifest,omitempty"`
	// Store is where the input lies in an object store (an object-store datastore's path or a
	// direct s3://, gs://, wasbs://, abfss:// or blob URL), resolved at job create; the node
	// reads it directly (docs/data.md).
	Store *datastore.Location `json:"store,omitempty"`
}

// IsLiteral reports whether the input is a plain value rather than data.
func (in Input) IsLiteral() bool {
	switch in.Type {
	case InputString, InputInteger, InputNumber, InputBoolean:
		return true
	}
	return false
}

// Output is one entry of `outputs:`.
type Output struct {
	Type        string `json:"type"` // uri_folder (default), uri_file, mltable, mlflow_model, custom_model, triton_model
	Mode        string `json:"mode,omitempty"`
	Path        string `json:"path,omitempty"`
	Name        string `json:"name,omitempty"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// Store is where the output is written in an object store, resolved at job create; the node
	// uploads it there directly when the command ends (docs/data.md).
	Store *datastore.Location `json:"store,omitempty"`
}

// Resources is `resources:`.
type Resources struct {
	InstanceCount    int            `json:"instance_count,omitempty"`
	InstanceType     string         `json:"instance_type,omitempty"`
	ShmSize          string         `json:"shm_size,omitempty"`
	DockerArgs       string         `json:"docker_args,omitempty"`
	Locations        []string       `json:"locations,omitempty"`
	MaxInstanceCount int            `json:"max_instance_count,omitempty"`
	Properties       map[string]any `json:"properties,omitempty"`
}

// Limits is `limits:`; TimeoutSeconds 0 means none.
type Limits struct {
	TimeoutSeconds int64 `json:"timeout,omitempty"`
}

// Distribution is `distribution:`.
type Distribution struct {
	Type                    string `json:"type"` // pytorch, mpi, tensorflow, ray
	ProcessCountPerInstance int    `json:"process_count_per_instance,omitempty"`
	WorkerCount             int    `json:"worker_count,omitempty"`
	ParameterServerCount    int    `json:"parameter_server_count,omitempty"`
	// Ray settings are kept verbatim.
	Ray map[string]any `json:"ray,omitempty"`
}

// QueueSettings is `queue_settings:`.
type QueueSettings struct {
	JobTier  string `json:"job_tier,omitempty"`
	Priority string `json:"priority,omitempty"` // low, medium, high
}

// ImportOutput is the output an import run writes its data to (Azure's data transfer jobs name
// it sink).
const ImportOutput = "sink"

// Import makes a run a data import (hangar data import, docs/data.md "Connections and data
// import"): its supervisor, outside the run's box, reads the connection's source into the
// output ImportOutput, and when the run completes the workspace registers the output as
// Asset's version Version. No user command runs.
type Import struct {
	Connection string `json:"connection"`
	// ConnectionType is the connection's type when the import was created (s3, postgresql).
	ConnectionType string `json:"connection_type"`
	// SourceType is database (Query is run) or file_system (Path is copied).
	SourceType string `json:"source_type"`
	Query      string `json:"query,omitempty"`
	Path       string `json:"path,omitempty"`
	// Store is where a file_system source lies (the connection's bucket and the path), resolved
	// at create.
	Store   *datastore.Location `json:"store,omitempty"`
	Asset   string              `json:"asset"`
	Version string              `json:"version"`
	// AssetType is mltable or uri_folder.
	AssetType string `json:"asset_type"`
	asset.Meta
}
