package spec

// The decoder's methods are grouped by the noun they read. Each noun's decoder embeds the
// shared *decoder (file, field path prefix, problems, and the primitives in decode.go,
// paths.go, confine.go and set.go) and reaches the other nouns through its fields.

// jobDecoder reads a command job and what every job kind shares: settings, inputs and
// outputs, code, includes, environment files (job.go, settings.go, inputs.go, includes.go,
// envfile.go).
type jobDecoder struct{ *decoder }

// sweepDecoder reads sweep jobs and their trials (sweep*.go).
type sweepDecoder struct{ *decoder }

// pipelineDecoder reads pipeline jobs, their steps and pipeline components (pipeline*.go).
type pipelineDecoder struct{ *decoder }

// parallelDecoder reads parallel jobs (parallel.go).
type parallelDecoder struct{ *decoder }

// servingDecoder reads online and batch endpoints and their deployments (endpoint.go,
// deployment*.go, batch*.go).
type servingDecoder struct{ *decoder }

// computeDecoder reads computes: local, ssh, slurm, cluster, kubernetes, serverless
// (compute*.go but compute_instance.go).
type computeDecoder struct{ *decoder }

// instanceDecoder reads compute instances (compute_instance.go).
type instanceDecoder struct{ *decoder }

// assetDecoder reads assets: data, models, environments, components, datastores (data.go,
// model.go, environment.go, component.go, datastore.go).
type assetDecoder struct{ *decoder }
