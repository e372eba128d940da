// Package cluster is managed clusters, the server side, in one place: the backend of cluster
// targets (runs are placed by Place, started by Submit on their nodes' agents, watched and
// canceled through them), the pass that schedules and scales every cluster (the pure scheduler
// and autoscaler, applied: nodes created, released and deleted through providers), the agents'
// dispatcher (join and agent tokens, heartbeats answered by long poll with the work queued in
// the store) and the clusters' decision state kept in the store.
package cluster
