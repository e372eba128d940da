package instances

import (
	"context"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// StoreOf is Store over the workspace store's aggregates: its instances, computes and nodes,
// and runs.
func StoreOf(st *store.Store) Store { return storeOf{st} }

type storeOf struct{ st *store.Store }

func (s storeOf) Instance(ctx context.Context, name string) (store.Instance, error) {
	return s.st.Instances.Get(ctx, name)
}

func (s storeOf) Instances(ctx context.Context) ([]store.Instance, error) {
	return s.st.Instances.List(ctx)
}

func (s storeOf) UpdateInstance(ctx context.Context, name string, fn func(in *store.Instance) (bool, error)) (store.Instance, error) {
	return s.st.Instances.Update(ctx, name, fn)
}

func (s storeOf) Compute(ctx context.Context, name string) (*compute.Target, error) {
	return s.st.Cluster.Compute(ctx, name)
}

func (s storeOf) Nodes(ctx context.Context, f store.NodeFilter) ([]*store.Node, error) {
	return s.st.Cluster.Nodes(ctx, f)
}

func (s storeOf) Run(ctx context.Context, id string) (*job.Run, error) { return s.st.Runs.Run(ctx, id) }

func (s storeOf) Runs(ctx context.Context, f store.RunFilter) ([]*job.Run, error) {
	return s.st.Runs.List(ctx, f)
}
