package supervisor

// The supervisor's work is split by noun: each part below holds the methods of one concern and
// reaches the run's shared state (config, connection, spec, warnings) through the Supervisor it
// embeds. assemble links them; every Supervisor is made through it.
type (
	// inputFetcher makes the run's inputs ready: downloads, mounts, model folders (prepare.go,
	// modeldir.go, box.go's direct inputs).
	inputFetcher struct{ *Supervisor }
	// runEnvironment makes the run's environment ready and builds its variables: the cached venv,
	// the interpreter shim or a container image (environment.go, container.go, prepare.go).
	runEnvironment struct{ *Supervisor }
	// rankLauncher starts, waits for and stops the processes of the run's ranks on this node, and
	// MPI's launcher and workers (ranks.go, mpi.go).
	rankLauncher struct{ *Supervisor }
	// outputCollector collects the node's part of the outputs, uploads and registers them
	// (finalize.go, outlinks.go, salvage.go).
	outputCollector struct{ *Supervisor }
	// replicaServer makes an online deployment's replica serve: Hangar's scoring server, an
	// image's own server, or the sidecar beside it (serve.go, serveimage.go, sidecar.go).
	replicaServer struct{ *Supervisor }
	// checkpointing restores and saves the run's checkpoint folder (checkpoint.go).
	checkpointing struct{ *Supervisor }
)

// assemble links s's parts to it and returns it.
func assemble(s *Supervisor) *Supervisor {
	s.inputs = &inputFetcher{s}
	s.environment = &runEnvironment{s}
	s.ranks = &rankLauncher{s}
	s.outputs = &outputCollector{s}
	s.serving = &replicaServer{s}
	s.checkpoints = &checkpointing{s}
	return s
}
