package controller

import (
	"context"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// replicaConfig is what a replica run's supervisor gets with its spec (nil for any other run):
// the secret the router's requests carry (one per attempt, the one internal/controller/endpoints
// puts in the router's table), and, on an attached VM, which the router reaches at its host
// rather than at the tunnel's loopback its supervisor sees, to listen on every address.
func (c *Controller) replicaConfig(ctx context.Context, r *job.Run) *api.ReplicaConfig {
	if r.Spec.Serve == nil {
		return nil
	}
	vm := false
	if t, err := c.Store.Cluster.Compute(ctx, r.Compute); err == nil {
		vm = compute.VMHost(*t) != ""
	}
	return &api.ReplicaConfig{Secret: tokens.Replica{Key: c.Tokens.Key}.Secret(r.ID, r.Attempt), AllInterfaces: vm}
}
