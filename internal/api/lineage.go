package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
)

// ModelLineage is where a model version came from and what uses it (GET
// /api/models/{name}/versions/{version}/lineage): the run whose output it was registered from,
// with that run's code snapshot, environment and input data, the MLflow aliases that name it,
// and the online and batch deployments serving it.
type ModelLineage struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Source is the version's source as stored: "local" (files uploaded) or a job output,
	// azureml://jobs/<job>/outputs/<output>[/paths/<path>].
	Source string `json:"source"`
	// Aliases are the model's MLflow aliases that point at this version, sorted.
	Aliases []string `json:"aliases"`
	// Run is the run that produced the version; nil for uploaded files.
	Run *LineageRun `json:"run,omitempty"`
	// Deployments are the deployments whose model is this version, by kind, endpoint, name.
	Deployments []ModelDeployment `json:"deployments"`
}

// LineageRun is the run a model version was registered from, as it ran.
type LineageRun struct {
	Name string `json:"name"`
	// Output is the run's output the version holds: "artifacts" (what it wrote to ./outputs and
	// logged through MLflow) or a named output, with "/paths/<path>" for a part of it.
	Output string `json:"output"`
	// Deleted says the run was deleted since: only its name is left.
	Deleted        bool      `json:"deleted,omitempty"`
	DisplayName    string    `json:"display_name,omitempty"`
	ExperimentName string    `json:"experiment_name,omitempty"`
	Status         job.State `json:"status,omitempty"`
	// CodeSnapshot is the manifest hash of the code the run ran ("": it had no code folder).
	CodeSnapshot string             `json:"code_snapshot,omitempty"`
	Environment  LineageEnvironment `json:"environment"`
	// Inputs are the run's data inputs (literal inputs are its parameters), by name.
	Inputs []LineageInput `json:"inputs"`
}

// LineageEnvironment is the environment a run ran in: a registered one (Name, Version), or an
// inline one (Image, or conda/pip files: Inline), or none (the host's).
type LineageEnvironment struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	// Ref is the reference the job gave (name:version, name@latest), for a registered one.
	Ref    string `json:"ref,omitempty"`
	Image  string `json:"image,omitempty"`
	Inline bool   `json:"inline,omitempty"`
}

// LineageInput is one data input of a run: Path as the job named it (a data asset
// azureml:<name>:<version>, another job's output azureml://jobs/..., a datastore path, or the
// client's local path of uploaded files), Manifest the files it got.
type LineageInput struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Path     string `json:"path,omitempty"`
	Manifest string `json:"manifest,omitempty"`
}

// Deployment kinds (ModelDeployment.Kind).
const (
	DeploymentOnline = "online"
	DeploymentBatch  = "batch"
)

// ModelDeployment is a deployment whose model is the version: Ref as the deployment names it
// (name:version, name@latest, name@alias) and Version, the version that ref resolved to.
type ModelDeployment struct {
	Kind       string `json:"kind"`
	Endpoint   string `json:"endpoint"`
	Deployment string `json:"deployment"`
	Ref        string `json:"ref"`
	Version    string `json:"version"`
	// State is an online deployment's provisioning state.
	State string `json:"state,omitempty"`
}

// ModelLineages is a model as its page in the studio shows it (GET /api/models/{name}/lineage):
// the registered model's own description and tags (MLflow's registered-models/update and
// set-tag; a version has its own) and every version's lineage, archived ones too, newest first.
type ModelLineages struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags"`
	Versions    []ModelLineage    `json:"versions"`
}

// ModelLineageClient reads model versions' lineage.
type ModelLineageClient struct{ c *Client }

// Get answers a version's lineage ("latest": the newest version not archived).
func (c *ModelLineageClient) Get(ctx context.Context, name, version string) (*ModelLineage, error) {
	var out ModelLineage
	path := "/api/models/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version) + "/lineage"
	return &out, c.c.do(ctx, http.MethodGet, path, nil, &out)
}

// Model answers a model's description and tags and every version's lineage (GET
// /api/models/{name}/lineage).
func (c *ModelLineageClient) Model(ctx context.Context, name string) (*ModelLineages, error) {
	var out ModelLineages
	return &out, c.c.do(ctx, http.MethodGet, "/api/models/"+url.PathEscape(name)+"/lineage", nil, &out)
}

// FromRun answers the model versions registered from a run's outputs, archived ones too, by
// name and version (GET /api/jobs/{name}/models).
func (c *ModelLineageClient) FromRun(ctx context.Context, run string) ([]model.Version, error) {
	var out []model.Version
	return out, c.c.do(ctx, http.MethodGet, "/api/jobs/"+url.PathEscape(run)+"/models", nil, &out)
}
