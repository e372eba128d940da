package controller

import (
	"context"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// What the serving and instance packages ask of the run core and of the resolver, beside
// Create, Cancel, OnChange, ResolveModel and Datastore (internal/controller/endpoints and
// internal/controller/instances declare the interfaces).

// Queue validates and queues a command job Hangar made itself (an online deployment's replica,
// a compute instance's setup script), which Create would refuse (serve is Hangar's to set).
func (c *Controller) Queue(ctx context.Context, sp job.Spec) (*job.Run, error) {
	return c.queue(ctx, sp, nil)
}

// ResolveCompute is the target a spec names ("" the workspace's default, serverless its pool).
func (c *Controller) ResolveCompute(ctx context.Context, name string) (*compute.Target, error) {
	return c.resolveCompute(ctx, name)
}

// ResolveEnvironment resolves sp's environment in place, with its warnings.
func (c *Controller) ResolveEnvironment(ctx context.Context, sp *job.Spec) ([]string, error) {
	return c.resolveEnvironment(ctx, sp)
}

// CheckForTarget refuses what target t cannot run, and warns about what it ignores.
func (c *Controller) CheckForTarget(sp job.Spec, t *compute.Target) ([]string, error) {
	return c.checkForTarget(sp, t)
}

// CheckSecretRefs refuses the secrets sp names that user by may not use.
func (c *Controller) CheckSecretRefs(ctx context.Context, by string, sp *job.Spec) error {
	return c.checkSecretRefs(ctx, by, sp, nil)
}
