package controller

import (
	"context"

	"github.com/hangar-ml/hangar/internal/job"
)

// What the serving and instance packages ask of the run core, beside Create, Cancel and
// OnChange (internal/controller/endpoints and internal/controller/instances declare the
// interfaces); what they ask of the workspace, *workspace.Workspace answers.

// Queue validates and queues a command job Hangar made itself (an online deployment's replica,
// a compute instance's setup script), which Create would refuse (serve is Hangar's to set).
func (c *Controller) Queue(ctx context.Context, sp job.Spec) (*job.Run, error) {
	return c.queue(ctx, sp, nil)
}
