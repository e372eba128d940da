// Package serving holds what online endpoints are made of: the endpoint and deployment
// definitions (the Azure ML CLI v2 schema's managedOnlineEndpoint / managedOnlineDeployment and
// their Kubernetes variants, decoded by internal/spec), and the pure decisions about them
// (traffic split, replica counts). The router that forwards requests is serving/router; the
// scoring server Hangar ships for code_configuration deployments is serving/scoring.
//
// A deployment's replica is a run: a command run of the deployment's code, environment and
// model on its target, submitted through the same backend contract as any job (so it gets a
// snapshot, logs, status and a place on local, SSH, cluster, Slurm or Kubernetes targets alike).
// See docs/design/0014-serving.md.
package serving
