// Package workspace resolves a job against the workspace (Resolve: its compute target, serverless
// pools, environment and curated environments, inputs from data assets, datastores, models and
// other jobs' outputs, pipeline components, the secrets it references) and holds the CRUD of those
// nouns: computes, environments, curated mappings, data, datastores, models, components and job
// secrets. The run core (internal/controller) calls Resolve when it creates a run; the server's
// handlers call the nouns directly.
package workspace
