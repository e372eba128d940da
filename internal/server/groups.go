package server

// The server's route groups, one per noun. Each is the server seen through one noun's
// handlers: Handler registers their methods, and handlers of one group reach another's through
// the server's field.
type (
	// endpointRoutes: online endpoints and deployments, replicas' claims, the serverless pool.
	endpointRoutes struct{ *Server }
	// batchRoutes: batch endpoints, deployments and invocations.
	batchRoutes struct{ *Server }
	// identityRoutes: users, roles and personal tokens, the studio's pages and logins (one-time
	// codes, OpenID Connect), the audit log.
	identityRoutes struct{ *Server }
	// jobRoutes: jobs as users see them (create, list, show, cancel, logs, metrics, trials,
	// steps, artifacts), sweeps and pipelines.
	jobRoutes struct{ *Server }
	// runRoutes: what a run's supervisor calls (spec, status, heartbeat, logs, metrics,
	// artifacts, checkpoints, exec, its container's log).
	runRoutes struct{ *Server }
	// computeRoutes: computes, their state and configuration, sizes.
	computeRoutes struct{ *Server }
	// instanceRoutes: compute instances, their Jupyter and their SSH tunnel.
	instanceRoutes struct{ *Server }
	// clusterRoutes: managed clusters' agents (join, heartbeat) and nodes.
	clusterRoutes struct{ *Server }
	// assetRoutes: models, data, environments (curated ones too), components.
	assetRoutes struct{ *Server }
	// secretRoutes: jobs' secrets and the workspace's settings.
	secretRoutes struct{ *Server }
	// blobRoutes: the content-addressed blobs and their collector.
	blobRoutes struct{ *Server }
)

// groups is the server's route groups.
type groups struct {
	endpoints *endpointRoutes
	batch     *batchRoutes
	identity  *identityRoutes
	jobs      *jobRoutes
	runs      *runRoutes
	computes  *computeRoutes
	instances *instanceRoutes
	cluster   *clusterRoutes
	assets    *assetRoutes
	secrets   *secretRoutes
	blobs     *blobRoutes
}

// newGroups returns s's route groups.
func newGroups(s *Server) groups {
	return groups{
		endpoints: &endpointRoutes{s}, batch: &batchRoutes{s}, identity: &identityRoutes{s},
		jobs: &jobRoutes{s}, runs: &runRoutes{s}, computes: &computeRoutes{s},
		instances: &instanceRoutes{s}, cluster: &clusterRoutes{s}, assets: &assetRoutes{s},
		secrets: &secretRoutes{s}, blobs: &blobRoutes{s},
	}
}
