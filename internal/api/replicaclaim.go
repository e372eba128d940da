package api

// ReplicaClaimRequest is what a pod of an online deployment's Kubernetes Deployment sends to
// POST /api/replica-claims, with its Deployment's claim token as the bearer token: its own pod
// name (the downward API's metadata.name).
type ReplicaClaimRequest struct {
	Pod string `json:"pod"`
}

// ReplicaClaim is the run the pod claimed: its supervisor config, run token included, as a
// Job's Secret would carry it.
type ReplicaClaim struct {
	RunID  string           `json:"run_id"`
	Config SupervisorConfig `json:"config"`
}
