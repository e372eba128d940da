// Package autoscaler decides, from a cluster's nodes, bounds and queued demand, how many nodes to add and which to release, delete or requeue from, and says why; it does no I/O.
package autoscaler
