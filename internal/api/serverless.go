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
