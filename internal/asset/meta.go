package asset

// Meta is what Azure ML lets a user say about any resource it registers (a model or data asset
// version, a job, an endpoint, a deployment): a description, tags and properties. Embedded, its
// fields stay top-level keys of the JSON, where the YAML schemas have them.
type Meta struct {
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
}
