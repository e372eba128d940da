package controller

import (
	"context"
	"errors"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// Data imports (docs/data.md "Connections and data import"): an import is a run in the
// workspace on a compute target (local by default) whose supervisor reads the connection's
// source into the run's output; it is never read inside the server. The run core registers the
// data version when the run completes (Imports.ended, before the end is recorded).

// Create queues a data import's run. props are the caller's properties for the run (its
// submitter, stamped by the server).
func (im *Imports) Create(ctx context.Context, req api.DataImportRequest, props map[string]string) (*job.Run, error) {
	c := im.c
	sp, err := c.Workspace.Connections.ImportJob(ctx, req.Spec)
	if err != nil {
		return nil, err
	}
	sp.Properties = props
	r, events, err := c.validatedRun(ctx, *sp, nil, "", nil)
	if err != nil {
		return nil, err
	}
	if err := storeNewRun(ctx, c.Store.RunWrites.CreateRun, r, events); err != nil {
		return nil, err
	}
	if err := c.Workspace.RecordOutputPaths(ctx, r); err != nil {
		return nil, err
	}
	c.Log.Info("data import created", "run", r.ID, "compute", r.Compute, "connection", sp.Import.Connection,
		"data", sp.Import.Asset, "version", sp.Import.Version)
	c.Changed(r.ID)
	c.Kick()
	return r, nil
}

// ended registers a completing import's data version before the run's end is recorded,
// once its output is assembled: the supervisor repeats its report until the end is recorded, so
// the version is registered at least once, and RegisterImport is idempotent. A version that
// cannot be registered (taken meanwhile, an output that is no table) fails the run with the
// reason; a transient error is returned, and the report comes again.
func (im *Imports) ended(ctx context.Context, id string, rep api.StatusReport) (api.StatusReport, error) {
	c := im.c
	if rep.State != job.Completed {
		return rep, nil
	}
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return rep, mapStoreErr(err)
	}
	if r.Spec.Import == nil || r.Status.Terminal() {
		return rep, nil
	}
	v, err := c.Workspace.Data.RegisterImport(ctx, r)
	var we *workspace.Error
	if errors.As(err, &we) {
		rep.State, rep.Reason = job.Failed, "registering the imported data: "+we.Msg
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	c.Log.Info("import registered", "run", id, "data", v.Name, "version", v.Version)
	return rep, nil
}
