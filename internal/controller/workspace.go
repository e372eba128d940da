package controller

import (
	"context"
	"time"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// Sealer encrypts and decrypts secrets at rest (secrets.Keyring).
type Sealer = workspace.Sealer

// Rotator is a Sealer whose key can be replaced (secrets.Box).
type Rotator = workspace.Rotator

// maxManifestBytes bounds a manifest the server reads whole.
const maxManifestBytes = workspace.MaxManifestBytes

// newWorkspace is the resolver of this controller's jobs, over the same store, blobs, backends
// and sealer; what it asks of runs and instances comes back here (workspaceHooks).
func (c *Controller) newWorkspace() *workspace.Workspace {
	h := workspaceHooks{c}
	a := c.Store.Assets
	st := workspace.Store{Settings: c.Store, Assets: a, Cluster: c.Store.Cluster, Runs: c.Store.Runs,
		Instances: c.Store.Instances, Tracking: c.Store.Tracking, Access: c.Store.Access, Aliases: a, Registry: a,
		Models:     workspace.VersionRows[model.Version]{Add: a.CreateModel, Get: a.Model, List: a.Models, SetArchived: a.SetModelArchived},
		Data:       workspace.VersionRows[dataset.Version]{Add: a.CreateData, Get: a.Data, List: a.DataVersions, SetArchived: a.SetDataArchived},
		Components: workspace.VersionRows[component.Version]{Add: a.CreateComponent, Get: a.Component, List: a.Components, SetArchived: a.SetComponentArchived},
	}
	return workspace.New(workspace.Deps{Store: st, Blobs: c.Blobs, Backends: c.Backends, Sealer: c.Secrets,
		Log: c.Log, Now: func() time.Time { return c.Now() }, LocalRuntime: c.LocalRuntime, Runs: h, Instances: h})
}

// workspaceHooks are the run core's and the instances' answers to the workspace
// (workspace.Runs, workspace.Instances).
type workspaceHooks struct{ c *Controller }

func (h workspaceHooks) Cancel(ctx context.Context, id string) (*job.Run, error) {
	return h.c.Cancel(ctx, id)
}

func (h workspaceHooks) ForgetTarget(name string) { h.c.calls.forget(name) }

func (h workspaceHooks) Kick() { h.c.Kick() }

func (h workspaceHooks) Created(ctx context.Context, s compute.Spec) error {
	return h.c.instanceCreated(ctx, s)
}

func (h workspaceHooks) Deletable(ctx context.Context, t *compute.Target) error {
	return h.c.instanceDeletable(ctx, t)
}
