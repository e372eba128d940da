package workspace

import (
	"context"

	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/model"
)

// The workspace's nouns: each holds the verbs of one (create, resolve, archive, list, delete),
// over the Workspace's dependencies. Set by New.
type (
	// Models are registered models' versions (Resolve, SetArchived: versions.go).
	Models struct {
		versions[model.Version]
		ws *Workspace
	}
	// Data are data assets' versions (Resolve, SetArchived: versions.go).
	Data struct {
		versions[dataset.Version]
		ws *Workspace
	}
	// Components are command and pipeline components' versions (Resolve, SetArchived: versions.go).
	Components struct {
		versions[component.Version]
		ws *Workspace
	}
	// Computes are compute targets and serverless pools.
	Computes struct{ ws *Workspace }
	// Datastores are the workspace's datastores.
	Datastores struct{ ws *Workspace }
	// Environments are registered environments and curated environments' mappings.
	Environments struct{ ws *Workspace }
	// Secrets are job secrets, who may use them, and the workspace key's rotation.
	Secrets struct{ ws *Workspace }
	// Connections are the external sources data imports read, their credentials sealed.
	Connections struct{ ws *Workspace }
)

// New is the workspace over d, its nouns set.
func New(d Deps) *Workspace {
	w := &Workspace{Deps: d}
	st := d.Store
	w.Models = &Models{versions[model.Version]{model.Kind, st.Models}, w}
	w.Data = &Data{versions[dataset.Version]{dataset.Kind, st.Data}, w}
	w.Components = &Components{versions[component.Version]{component.Kind, st.Components}, w}
	w.Computes, w.Datastores = &Computes{w}, &Datastores{w}
	w.Environments, w.Secrets = &Environments{w}, &Secrets{w}
	w.Connections = &Connections{w}
	return w
}

// ResolveModel finds a model version by reference (Models.Resolve), for resolvers that take
// the whole Workspace (serving's).
func (w *Workspace) ResolveModel(ctx context.Context, ref string) (*model.Version, error) {
	return w.Models.Resolve(ctx, ref)
}

// Datastore is a datastore by name (Datastores.Get), for resolvers that take the whole Workspace.
func (w *Workspace) Datastore(ctx context.Context, name string) (*datastore.Datastore, error) {
	return w.Datastores.Get(ctx, name)
}
