package api

// ServerlessUse is what the serverless pool created for a job (design 0017), shown by job show.
type ServerlessUse struct {
	// Pool is the pool's name (serverless); Cluster the pool's cluster of Size the job ran on.
	Pool    string `json:"pool"`
	Size    string `json:"size"`
	Cluster string `json:"cluster"`
	// Instances is how many nodes the job asked for; Nodes the nodes its current attempt was
	// placed on (none before it is placed).
	Instances int      `json:"instances"`
	Nodes     []string `json:"nodes,omitempty"`
}

// ServerlessPool says where the capacity of the workspace's serverless pool comes from, on the
// pool's entry of compute list and show (type serverless).
type ServerlessPool struct {
	// Configured is false while no owner has configured a pool: jobs on serverless compute then
	// run on this machine, through agents of the local provider.
	Configured bool `json:"configured"`
	// Capacity says where nodes come from, for people: "this machine; no pool configured", or
	// the configured pool's provider ("local provider: agents on this machine", "command
	// provider: the owner's create and delete scripts").
	Capacity string `json:"capacity"`
}
