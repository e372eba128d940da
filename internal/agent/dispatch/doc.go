// Package dispatch is the server side of cluster agents: nodes are created with a join token, agents join and heartbeat, and the controller queues run assignments, cancels and releases that heartbeat replies deliver.
package dispatch
