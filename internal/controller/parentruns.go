package controller

import (
	"context"

	"github.com/hangar-ml/hangar/internal/controller/parents"
	"github.com/hangar-ml/hangar/internal/job"
)

// What the parent loop (package parents) asks of the run core and of the workspace; its
// children's creation is in children.go, sweepjobs.go and pipelinejobs.go.
var (
	_ parents.Runs     = (*Controller)(nil)
	_ parents.Resolver = (*Parents)(nil)
)

// Transition moves a run to state to, as the run core's own edges do.
func (c *Controller) Transition(ctx context.Context, id string, to job.State, reason string) (*job.Run, error) {
	return c.transition(ctx, id, to, reason, nil, nil)
}

// SetNamedOutputs makes named a parent's named outputs (a sweep's best trial's, the outputs of
// a pipeline's steps that it names as its own).
func (c *Controller) SetNamedOutputs(ctx context.Context, id string, named map[string]string) error {
	_, err := c.Store.RunWrites.UpdateRun(ctx, id, func(r *job.Run) ([]job.Event, error) {
		r.NamedOutputs = named
		return nil, nil
	})
	return err
}

// ResolveStepInput binds input in of a pipeline's step to ref's output of the producer run src:
// its files in the workspace, or the place in an object store src wrote it at
// (workspace.ResolveJobOutput).
func (n *Parents) ResolveStepInput(ctx context.Context, pl job.PipelineRun, step, in string, ref job.StepRef, src string) (job.Input, error) {
	c := n.c
	decl := fromInput(pl.Steps[step].Spec.Inputs[in], pl, ref, "azureml://jobs/"+src+"/outputs/"+ref.Output, "")
	return c.Workspace.ResolveJobOutput(ctx, in, decl)
}

// ResolveStartData resolves, when a pipeline's step starts, its inputs at workspaceblobstore
// paths that were left for then (pipelinedata.go).
func (n *Parents) ResolveStartData(ctx context.Context, p *job.Run, step string, sp *job.Spec) error {
	c := n.c
	return c.resolveStartData(ctx, p, step, sp)
}
