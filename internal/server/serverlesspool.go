package server

import (
	"context"
	"errors"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// The serverless pool is listed and shown whether an owner configured it or not: until then it
// is this machine's capacity (compute.MachinePool), never stored, and compute list and show
// say so through api.ServerlessPool.

// machinePool is this machine's serverless pool as compute list and show give it, or nil when
// an owner configured a pool (it is then a stored target like the others).
func (s *endpointRoutes) machinePool(ctx context.Context) (*api.Compute, error) {
	_, err := s.cfg.Store.Cluster.Compute(ctx, compute.ServerlessName)
	if err == nil {
		return nil, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	t, err := workspace.MachinePoolTarget()
	if err != nil {
		return nil, err
	}
	c := s.computes.describe(ctx, *t, false)
	c.ServerlessPool = &api.ServerlessPool{Configured: false, Capacity: compute.MachinePoolDescription}
	return &c, nil
}

// describePool fills in a serverless pool's entry: where its capacity comes from.
func (s *endpointRoutes) describePool(c *api.Compute) {
	if c.Type != compute.TypeServerless {
		return
	}
	p := &api.ServerlessPool{Configured: true, Capacity: "the pool's provider"}
	if c.Spec != nil && c.Spec.Serverless != nil {
		switch pt := c.Spec.Serverless.Provider.Type; pt {
		case compute.ProviderLocal:
			p.Capacity = "local provider: agents on this machine"
		default:
			p.Capacity = pt + " provider: the owner's create and delete scripts"
		}
	}
	c.ServerlessPool = p
}
