package cluster

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// A planned stop deletes only the idle nodes of local-provider clusters: a node with a run is
// left (and named), a command provider's machine and a compute instance's node are not touched.
func TestStopIdleLocalNodes(t *testing.T) {
	b, _ := newBackend(t)
	rec := &kindRecorder{deleted: map[string][]string{}}
	b.Provider = rec.provider
	ctx := t.Context()
	put := func(s compute.Spec) {
		t.Helper()
		props, err := json.Marshal(compute.Stored{Spec: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Store.Cluster.PutCompute(ctx, compute.Target{Name: s.Name, Type: s.Type, Properties: props}); err != nil {
			t.Fatal(err)
		}
	}
	cluster := func(name, prov string) compute.Spec {
		return compute.Spec{Name: name, Type: compute.TypeCluster, Cluster: &compute.ClusterSpec{Size: "local-quarter", MaxInstances: 2,
			Provider: compute.Provider{Type: prov, Create: "c.sh", Delete: "d.sh"}}}
	}
	put(cluster("warm", compute.ProviderLocal))
	put(cluster("busy", ""))
	put(cluster("cloud", compute.ProviderCommand))
	put(compute.Spec{Name: "ci1", Type: compute.TypeInstance, Instance: &compute.InstanceSpec{Size: "local-quarter"}})
	node := func(pool, providerID string, runs ...store.NodeRun) string {
		t.Helper()
		n, _, err := b.Agents.CreateNode(ctx, NewNode{Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Store.Cluster.UpdateNode(ctx, n.ID, func(n *store.Node) ([]store.NodeEvent, error) {
			n.ProviderID, n.State, n.Runs = providerID, compute.NodeIdle, runs
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	warm := node("warm", "dir-warm")
	busy := node("busy", "dir-busy", store.NodeRun{RunID: "r1"})
	node("cloud", "vm-1")
	node("ci1", "dir-ci1")

	left, err := b.StopIdleLocalNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{busy}) {
		t.Errorf("left %v, want [%s]", left, busy)
	}
	rec.mu.Lock()
	deleted := rec.deleted
	rec.mu.Unlock()
	if got := deleted[compute.ProviderLocal]; !slices.Equal(got, []string{"dir-warm"}) || len(deleted[compute.ProviderCommand]) != 0 {
		t.Errorf("machines deleted %v, want only dir-warm by the local provider", deleted)
	}
	if _, err := b.Store.Cluster.Node(ctx, warm); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the stopped idle node is still stored (%v): a restarted server would wait for its agent", err)
	}
}
