package model

import (
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
)

// Model types, as the Azure ML model schema names them.
const (
	CustomModel = "custom_model"
	MLflowModel = "mlflow_model"
	TritonModel = "triton_model"
)

// Types lists the model types, the default first.
var Types = []string{CustomModel, MLflowModel, TritonModel}

// SourceLocal is a Version's Source when its files were uploaded from the client.
const SourceLocal = "local"

// Spec is what a model file (or `model create`'s flags) asks to register. Path is a local path
// (absolute, on the client) or an azureml://jobs/<job>/outputs/<output>[/paths/<p>] URI.
type Spec struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Type    string `json:"type,omitempty"`
	Path    string `json:"path"`
	asset.Meta
	Stage string `json:"stage,omitempty"`
}

// Version is one registered version of a model. Manifest is the hash of its files' manifest in
// the workspace's blob store; Source is the job output it was registered from, or "local".
type Version struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Type     string `json:"type"`
	Manifest string `json:"manifest"`
	Source   string `json:"source"`
	asset.Meta
	Stage string `json:"stage,omitempty"`
	// MLflowStage is the version's stage in MLflow's registry, Staging or Production ("": None;
	// an archived version is MLflow's Archived), set by MLflow's transition-stage.
	MLflowStage string `json:"mlflow_stage,omitempty"`
	// Aliases are the registry's aliases that name this version (champion), by name.
	Aliases []string `json:"aliases,omitempty"`
	// Folder is the name of the registered folder ("" for a model that is one file): a
	// deployment finds the model's files under $AZUREML_MODEL_DIR/<Folder>, as on Azure.
	Folder string `json:"folder,omitempty"`
	// Files and Size describe the manifest (how many files, how many bytes), for show and list.
	Files     int       `json:"files"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
	Archived  bool      `json:"archived"`
}

// ID is the reference that names this version: azureml:<name>:<version>.
func (v Version) ID() string { return "azureml:" + v.Name + ":" + v.Version }

// Kind is how models are named in messages and Azure ids.
var Kind = asset.Kind{Noun: "model", Collection: "models", Command: "model", Aliases: true}

// CheckName says what is wrong with a model name, or returns nil.
func CheckName(name string) error { return Kind.CheckName(name) }

// ParseVersion reads a model version (asset.Kind.ParseVersion): a string as Azure's (0.0.1,
// v2), an integer in its canonical form ("007" is "7").
func ParseVersion(s string) (string, error) { return Kind.ParseVersion(s) }

// CheckType returns the type's canonical spelling ("" is custom_model), or an error.
func CheckType(t string) (string, error) { return asset.CheckType(t, Types) }
