package component

import (
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
)

// Component types.
const (
	Command  = "command"
	Pipeline = "pipeline"
)

// Kind is how messages and references name components.
var Kind = asset.Kind{Noun: "component", Collection: "components", Command: "component"}

// Spec is a component file, decoded: what `component create` registers, and what a pipeline
// step that names the file uses.
type Spec struct {
	Name        string            `json:"name"`
	Version     string            `json:"version,omitempty"`
	Type        string            `json:"type"` // command or pipeline
	DisplayName string            `json:"display_name,omitempty"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// Deterministic is is_deterministic (default true): false keeps its steps out of the step cache.
	Deterministic bool                  `json:"is_deterministic"`
	Inputs        map[string]Input      `json:"inputs,omitempty"`
	Outputs       map[string]job.Output `json:"outputs,omitempty"`
	// Job is a command component's step: command, code (CodeSnapshot once uploaded), environment,
	// environment variables, resources, distribution. Its Inputs and Outputs are unused: a step
	// gets its inputs from Bind.
	Job *job.Spec `json:"job,omitempty"`
	// Graph is a pipeline component's steps.
	Graph *Graph `json:"graph,omitempty"`
}

// Input is a declared input: its type, default (Value when HasDefault), whether it may be
// left out, and the bounds a literal value must keep.
type Input struct {
	job.Input
	HasDefault bool     `json:"has_default,omitempty"`
	Min        *float64 `json:"min,omitempty"`
	Max        *float64 `json:"max,omitempty"`
	Enum       []string `json:"enum,omitempty"`
}

// Graph is a pipeline component's steps, already flat (its own nested pipelines inlined, their
// steps named "<inner>.<step>"). A step input bound to the component's own input
// (${{parent.inputs.x}}) is in Params; one bound to a sibling's output is in the step's From.
type Graph struct {
	Steps map[string]Step `json:"steps"`
	// Outputs binds the component's outputs to the step outputs that produce them.
	Outputs map[string]job.StepRef `json:"outputs,omitempty"`
}

// Step is one step of a Graph.
type Step struct {
	job.PipelineStep
	// Params maps a step input to the component input it takes (${{parent.inputs.<x>}}).
	Params map[string]string `json:"params,omitempty"`
	// ComputeParam is the component input that names the step's compute, if any.
	ComputeParam string `json:"compute_param,omitempty"`
	// Checks are the step's own declarations of the inputs in Params (its component's type,
	// min, max, enum): the value a parameter gets is checked against them when it is bound.
	Checks map[string]Input `json:"checks,omitempty"`
}

// Version is one registered version of a component.
type Version struct {
	Spec
	// Source is the file it was created from, as the user named it.
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Archived  bool      `json:"archived"`
}

// ID is the version's reference: name:version.
func (v Version) ID() string { return v.Name + ":" + v.Version }

// AssetKey makes a component version an asset.Versioned, for Latest and Listing.
func (v Version) AssetKey() asset.Key {
	return asset.Key{Name: v.Name, Version: v.Version, Archived: v.Archived, Created: v.CreatedAt}
}

// Latest returns the newest version that is not archived (asset.Newer), or false.
func Latest(vs []Version) (Version, bool) { return asset.Latest(vs) }

// Listing picks what `component list` shows (asset.Listing).
func Listing(vs []Version, name string, includeArchived bool) []Version {
	return asset.Listing(vs, name, includeArchived)
}
