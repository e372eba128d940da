package controller

import (
	"context"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
	"github.com/hangar-ml/hangar/internal/store"
)

// What creating and deleting a compute instance's target does to its life (its row, which
// internal/controller/instances moves on from there).

// instanceCreated starts a new instance's life: Azure creates an instance running, so its
// node is asked for at once.
func (c *Controller) instanceCreated(ctx context.Context, s compute.Spec) error {
	owner := s.Instance.Owner
	_, err := c.Store.Instances.Update(ctx, s.Name, func(in *store.Instance) (bool, error) {
		if in.State != "" {
			return false, nil // an update: its life goes on
		}
		now := c.Now()
		in.State, in.Reason, in.Since, in.ActiveAt, in.UpdatedAt = string(instance.Starting), "created by "+owner, now, now, now
		in.Starts = 1
		return true, nil
	})
	c.Kick()
	return err
}

// instanceDeletable refuses to delete an instance that still has its node: stop it first.
func (c *Controller) instanceDeletable(ctx context.Context, t *compute.Target) error {
	if t.Type != compute.TypeInstance {
		return nil
	}
	nodes, err := c.Store.Cluster.Nodes(ctx, store.NodeFilter{Pool: t.Name})
	if err != nil {
		return err
	}
	if len(nodes) > 0 {
		return conflictf("compute instance %s still has its node %s; stop it first (hangar compute stop %s)", t.Name, nodes[0].ID, t.Name)
	}
	return nil
}
