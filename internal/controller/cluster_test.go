package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/agent/dispatch"
	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// fakeProvider creates machines named vm-<node>, or fails with createErr; Explain returns what
// a create hook would have printed.
type fakeProvider struct {
	mu        sync.Mutex
	createErr error
	output    string
	tokens    map[string]string // node → join token
	created   []string
	deleted   []string
}

func (p *fakeProvider) Create(_ context.Context, req provider.CreateRequest) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.createErr != nil {
		return "", fmt.Errorf("create node %s: %w", req.NodeID, p.createErr)
	}
	p.created = append(p.created, req.NodeID)
	p.tokens[req.NodeID] = req.JoinToken
	return "vm-" + req.NodeID, nil
}

func (p *fakeProvider) Delete(_ context.Context, req provider.DeleteRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleted = append(p.deleted, req.ProviderID)
	return nil
}

func (p *fakeProvider) Explain(_ context.Context, req provider.DeleteRequest) string {
	return "create hook output: " + p.output
}

// clusterFixture is a controller with one cluster, "pool" (one node at most, join_timeout 90s),
// whose nodes come from a fakeProvider, on the fixture's clock.
type clusterFixture struct {
	*fixture
	prov *fakeProvider
	d    *dispatch.Dispatcher
}

var testSize = sizes.Size{Name: "test-2", Cores: 2, MemoryBytes: 4 * resources.Gi, Family: "test"}

func newClusterFixture(t *testing.T) *clusterFixture {
	t.Helper()
	f := newFixture(t)
	f.c.Backends[compute.TypeCluster] = backendtest.New() // Create checks that the type can run jobs
	prov := &fakeProvider{output: "booting VM (no agent)", tokens: map[string]string{}}
	d := &dispatch.Dispatcher{Store: f.c.Store, Key: []byte("test key"), Now: f.clock.Now,
		RunToken: func(id string) string { return "token-" + id }}
	f.c.Clusters = &Clusters{Dispatch: d, JoinURL: func() string { return "http://127.0.0.1:1" },
		Sizes:    func(context.Context) (*sizes.Catalog, error) { return sizes.NewCatalog([]sizes.Size{testSize}), nil },
		Provider: func(compute.Spec) (provider.Provider, error) { return prov, nil }}
	props, err := json.Marshal(compute.Stored{Spec: compute.Spec{Name: "pool", Type: compute.TypeCluster,
		Cluster: &compute.ClusterSpec{Size: testSize.Name, Tier: compute.TierDedicated, MaxInstances: 1,
			IdleTimeBeforeScaleDown: 60, ProvisionTimeout: 900, JoinTimeout: 90,
			Provider: compute.Provider{Type: compute.ProviderCommand, Create: "create.sh", Delete: "delete.sh"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Store.PutCompute(t.Context(), compute.Target{Name: "pool", Type: compute.TypeCluster, Properties: props,
		CreatedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	return &clusterFixture{fixture: f, prov: prov, d: d}
}

// pass runs one reconcile and waits for the provider calls it started.
func (f *clusterFixture) pass(t *testing.T) {
	t.Helper()
	f.reconcile(t)
	f.c.Clusters.Wait()
}

func (f *clusterFixture) nodes(t *testing.T) []*store.Node {
	t.Helper()
	ns, err := f.c.Store.Nodes(t.Context(), store.NodeFilter{Pool: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// timeline lists the cluster's events as "node from>to: reason".
func (f *clusterFixture) timeline(t *testing.T) []string {
	t.Helper()
	evs, err := f.c.Store.NodeEvents(t.Context(), store.NodeEventFilter{Pool: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%s %s>%s: %s", e.NodeID, e.From, e.To, e.Reason))
	}
	return out
}

// A node whose machine was created but whose agent never joins is deleted when join_timeout
// ends (long before provision_timeout), with what the provider printed as the reason: on the
// timeline, as the cluster's last error, and on the run waiting for it.
func TestClusterNodeThatNeverJoinsFailsAfterJoinTimeout(t *testing.T) {
	f := newClusterFixture(t)
	r := f.create(t, job.Spec{Compute: "pool", Command: "python train.py"})
	f.pass(t)
	ns := f.nodes(t)
	if len(ns) != 1 || ns[0].State != store.NodeProvisioning || ns[0].ProviderID != "vm-"+ns[0].ID {
		t.Fatalf("after scale up: %+v", ns)
	}
	id := ns[0].ID
	if want := f.clock.Now().Add(90 * time.Second); !ns[0].JoinDeadline.Equal(want) {
		t.Errorf("join deadline %s, want %s (join_timeout after the machine was created)", ns[0].JoinDeadline, want)
	}

	f.clock.Advance(90*time.Second - time.Second)
	f.pass(t)
	if ns := f.nodes(t); len(ns) != 1 {
		t.Fatalf("deleted before its join timeout: %+v", ns)
	}
	f.clock.Advance(time.Second)
	f.pass(t)
	if ns := f.nodes(t); len(ns) != 0 {
		t.Fatalf("a node that never joined is still there after its join timeout: %+v", ns)
	}
	why := "did not join within 1m30s: create hook output: booting VM (no agent)"
	want := []string{
		id + " >provisioning: scale up 0→1: 1 queued run needs 1 node",
		id + " provisioning>provisioning: machine vm-" + id + " created; waiting up to 1m30s for its agent to join",
		id + " provisioning>releasing: delete node " + id + ": " + why,
		id + " releasing>deleted: delete node " + id + ": " + why,
	}
	if got := f.timeline(t); !slices.Equal(got, want) {
		t.Errorf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(f.prov.deleted, []string{"vm-" + id}) {
		t.Errorf("provider deletes %v", f.prov.deleted)
	}
	st, _ := f.c.PoolState("pool")
	if st.LastError != "node "+id+": "+why {
		t.Errorf("last error %q", st.LastError)
	}
	f.pass(t) // the next pass tells the waiting run
	if got := f.run(t, r.ID).StatusReason; !strings.Contains(got, "provisioning is failing: node "+id+": "+why) {
		t.Errorf("the waiting run's reason %q does not name the failure", got)
	}
}

// A create hook that fails shows on the runs waiting for the node, until a node joins.
func TestClusterProvisioningFailureReachesWaitingRuns(t *testing.T) {
	f := newClusterFixture(t)
	f.prov.createErr = errors.New("create hook: exit status 1: create.sh: cannot find the hangar binary 'hangar'")
	r := f.create(t, job.Spec{Compute: "pool", Command: "python train.py"})
	f.pass(t)
	f.pass(t)
	want := "provisioning is failing: create node "
	if got := f.run(t, r.ID).StatusReason; !strings.Contains(got, want) || !strings.Contains(got, "cannot find the hangar binary 'hangar'") {
		t.Fatalf("waiting run's reason %q", got)
	}

	f.prov.mu.Lock()
	f.prov.createErr = nil
	f.prov.mu.Unlock()
	f.clock.Advance(time.Minute) // past the backoff
	f.pass(t)
	ns := f.nodes(t)
	if len(ns) != 1 {
		t.Fatalf("no node after the backoff: %+v", ns)
	}
	join(t, f, ns[0].ID)
	f.clock.Advance(time.Second)
	f.pass(t)
	if got := f.run(t, r.ID).StatusReason; strings.Contains(got, "failing") {
		t.Errorf("once a node joined, the run still says %q", got)
	}
}

// join makes a node's agent join with the token its provider was given.
func join(t *testing.T, f *clusterFixture, nodeID string) {
	t.Helper()
	f.prov.mu.Lock()
	tok := f.prov.tokens[nodeID]
	f.prov.mu.Unlock()
	info := api.AgentInfo{Capacity: testSize.Vector()}
	if _, err := f.d.Join(t.Context(), tok, api.JoinRequest{NodeID: nodeID, AgentInfo: info}); err != nil {
		t.Fatal(err)
	}
}

// compute node delete: the provider deletes the machine, the node leaves with "deleted by the
// user", its run goes back to the queue as a new attempt, and the cluster provisions again.
func TestClusterDeleteNodeByHand(t *testing.T) {
	f := newClusterFixture(t)
	r := f.create(t, job.Spec{Compute: "pool", Command: "python train.py"})
	f.pass(t)
	id := f.nodes(t)[0].ID
	join(t, f, id)
	f.pass(t)
	if got := f.run(t, r.ID); len(got.Handle) == 0 {
		t.Fatalf("run not placed on the joined node: %s", got.StatusReason)
	}

	out, err := f.c.DeleteNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	f.c.Clusters.Wait()
	if want := (&api.NodeDeletion{Node: id, Pool: "pool", Reason: "deleted by the user", Requeued: []string{r.ID}}); fmt.Sprint(out) != fmt.Sprint(want) {
		t.Errorf("DeleteNode = %+v, want %+v", out, want)
	}
	got := f.run(t, r.ID)
	if got.Status != job.Queued || got.Attempt != 2 || len(got.Handle) != 0 ||
		!strings.HasPrefix(got.StatusReason, "requeue run "+r.ID+": node "+id+" deleted by the user; attempt 2") {
		t.Errorf("the run on the deleted node: %s attempt %d, handle %s, %q", got.Status, got.Attempt, got.Handle, got.StatusReason)
	}
	tl := f.timeline(t)
	if want := []string{id + " idle>releasing: deleted by the user", id + " releasing>deleted: deleted by the user"}; !slices.Equal(tl[len(tl)-2:], want) {
		t.Errorf("timeline ends %q, want %q", tl[len(tl)-2:], want)
	}
	if !slices.Equal(f.prov.deleted, []string{"vm-" + id}) {
		t.Errorf("provider deletes %v", f.prov.deleted)
	}

	f.pass(t)
	if ns := f.nodes(t); len(ns) != 1 || ns[0].ID == id || len(f.prov.created) != 2 {
		t.Errorf("the cluster did not provision again: nodes %+v, created %v", ns, f.prov.created)
	}
	if _, err := f.c.DeleteNode(t.Context(), id); err == nil || !strings.Contains(err.Error(), "node "+id+" does not exist") {
		t.Errorf("deleting it again = %v", err)
	}
}

// A node removed while its provider was still creating the machine has that machine deleted as
// soon as it exists.
func TestClusterMachineOfRemovedNodeIsDeleted(t *testing.T) {
	f := newClusterFixture(t)
	n, _, err := f.d.CreateNode(t.Context(), dispatch.NewNode{Pool: "pool", Size: testSize})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.d.Delete(t.Context(), n.ID, ReasonUserDeleted); err != nil {
		t.Fatal(err)
	}
	spec := compute.Spec{Name: "pool", Type: compute.TypeCluster, Cluster: &compute.ClusterSpec{}}
	f.c.machineCreated(t.Context(), spec, f.prov, n.ID, "vm-late")
	if !slices.Equal(f.prov.deleted, []string{"vm-late"}) {
		t.Errorf("provider deletes %v, want the late machine", f.prov.deleted)
	}
}
