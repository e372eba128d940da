package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/store"
)

// kindRecorder records which provider type each deletion went to.
type kindRecorder struct {
	mu      sync.Mutex
	deleted map[string][]string // provider type → provider ids
}

func (k *kindRecorder) provider(s compute.Spec) (provider.Provider, error) {
	typ := compute.ProviderLocal
	if s.Cluster != nil && s.Cluster.Provider.Type != "" {
		typ = s.Cluster.Provider.Type
	}
	return recorderOf{k, typ}, nil
}

type recorderOf struct {
	k   *kindRecorder
	typ string
}

func (r recorderOf) Create(context.Context, provider.CreateRequest) (string, error) {
	return "", errors.New("not used")
}

func (r recorderOf) Delete(_ context.Context, req provider.DeleteRequest) error {
	r.k.mu.Lock()
	defer r.k.mu.Unlock()
	r.k.deleted[r.typ] = append(r.k.deleted[r.typ], req.ProviderID)
	return nil
}

// compute node delete on a compute instance whose node comes from the command provider deletes
// the machine through that provider (its delete hook), not the local one.
func TestDeleteNodeOfInstanceUsesItsProvider(t *testing.T) {
	b, _ := newBackend(t)
	rec := &kindRecorder{deleted: map[string][]string{}}
	b.Provider = rec.provider
	ctx := t.Context()
	spec := compute.Spec{Name: "ci1", Type: compute.TypeInstance, Instance: &compute.InstanceSpec{Size: "local-quarter",
		Provider: compute.Provider{Type: compute.ProviderCommand, Create: "create.sh", Delete: "delete.sh"}}}
	props, err := json.Marshal(compute.Stored{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Store.Cluster.PutCompute(ctx, compute.Target{Name: "ci1", Type: compute.TypeInstance, Properties: props}); err != nil {
		t.Fatal(err)
	}
	n, _, err := b.Agents.CreateNode(ctx, NewNode{Pool: "ci1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Cluster.UpdateNode(ctx, n.ID, func(n *store.Node) ([]store.NodeEvent, error) {
		n.ProviderID = "vm-7"
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DeleteNode(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	b.wg.Wait() // the provider deletes in the background
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := rec.deleted[compute.ProviderCommand]; len(got) != 1 || got[0] != "vm-7" || len(rec.deleted[compute.ProviderLocal]) != 0 {
		t.Errorf("deletions by provider %v, want vm-7 by the command provider", rec.deleted)
	}
}
