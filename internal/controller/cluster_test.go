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

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
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
	preempted []string // provider ids the cloud took back
}

func (p *fakeProvider) Preempted(context.Context) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.preempted), nil
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
// run by the real cluster backend, whose nodes come from a fakeProvider, on the fixture's clock.
type clusterFixture struct {
	*fixture
	prov *fakeProvider
	cl   *cluster.Backend
	d    *cluster.Dispatcher
}

var testSize = sizes.Size{Name: "test-2", Cores: 2, MemoryBytes: 4 * resources.Gi, Family: "test"}

func newClusterFixture(t *testing.T) *clusterFixture {
	t.Helper()
	f := newFixture(t)
	prov := &fakeProvider{output: "booting VM (no agent)", tokens: map[string]string{}}
	cf := &clusterFixture{fixture: f, prov: prov}
	cf.attach(f.c)
	putCluster(t, f, "pool", compute.TierDedicated, 1)
	return cf
}

// attach gives a controller the fixture's cluster backend, as serve.go does: a fresh backend and
// dispatcher over the controller's store (a restarted server has nothing else).
func (f *clusterFixture) attach(c *Controller) {
	f.d = &cluster.Dispatcher{Store: c.Store, Key: []byte("test key"), Now: f.clock.Now, Runs: clusterRuns{c}}
	f.cl = &cluster.Backend{Store: c.Store, Agents: f.d, JoinURL: func() string { return "http://127.0.0.1:1" },
		Sizes:    func(context.Context) (*sizes.Catalog, error) { return sizes.NewCatalog([]sizes.Size{testSize}), nil },
		Provider: func(compute.Spec) (provider.Provider, error) { return f.prov, nil },
		Policy:   autoscaler.Policy{MaxPreemptionRetries: 1}, Requeuer: c, Now: f.clock.Now}
	c.Backends[compute.TypeCluster] = f.cl
}

// putCluster stores a cluster of testSize nodes whose provider is the fixture's.
func putCluster(t *testing.T, f *fixture, name, tier string, maxNodes int) {
	t.Helper()
	props, err := json.Marshal(compute.Stored{Spec: compute.Spec{Name: name, Type: compute.TypeCluster,
		Cluster: &compute.ClusterSpec{Size: testSize.Name, Tier: tier, MaxInstances: maxNodes,
			IdleTimeBeforeScaleDown: 60, ProvisionTimeout: 900, JoinTimeout: 90,
			Provider: compute.Provider{Type: compute.ProviderCommand, Create: "create.sh", Delete: "delete.sh"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Store.Cluster.PutCompute(t.Context(), compute.Target{Name: name, Type: compute.TypeCluster, Properties: props,
		CreatedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
}

// pass runs one reconcile and waits for the provider calls it started.
func (f *clusterFixture) pass(t *testing.T) {
	t.Helper()
	f.reconcile(t)
	f.cl.Wait()
}

func (f *clusterFixture) nodes(t *testing.T) []*store.Node {
	t.Helper()
	ns, err := f.c.Store.Cluster.Nodes(t.Context(), store.NodeFilter{Pool: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// timeline lists the cluster's events as "node from>to: reason".
func (f *clusterFixture) timeline(t *testing.T) []string {
	t.Helper()
	evs, err := f.c.Store.Cluster.NodeEvents(t.Context(), store.NodeEventFilter{Pool: "pool"})
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
	if len(ns) != 1 || ns[0].State != compute.NodeProvisioning || ns[0].ProviderID != "vm-"+ns[0].ID {
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
	st, _, _ := f.c.Store.Cluster.PoolState(t.Context(), "pool")
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

	out, err := f.cl.DeleteNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	f.cl.Wait()
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
	if _, err := f.cl.DeleteNode(t.Context(), id); err == nil || !strings.Contains(err.Error(), "node "+id+" does not exist") {
		t.Errorf("deleting it again = %v", err)
	}
}

// restart is a new controller over the same store, with a new cluster backend: all a restarted
// server has is what the store kept.
func (f *clusterFixture) restart(t *testing.T) {
	t.Helper()
	cfg := f.c.Config
	cfg.Backends = map[string]backend.Backend{compute.TypeLocal: f.fake}
	c := New(cfg)
	f.c = c
	f.attach(c)
}

// placeOnNewNode runs passes until the pool made a node for the run, joins that node, and
// places the run on it; it returns the node.
func placeOnNewNode(t *testing.T, f *clusterFixture, runID string) string {
	t.Helper()
	return placeOnNewNodeIn(t, f, "pool", runID)
}

// preempt has the provider report a node's machine taken back, and runs the pass that notices
// (the provider is asked every few seconds).
func preempt(t *testing.T, f *clusterFixture, nodeID string) {
	t.Helper()
	f.prov.mu.Lock()
	f.prov.preempted = append(f.prov.preempted, "vm-"+nodeID)
	f.prov.mu.Unlock()
	f.clock.Advance(10 * time.Second)
	f.pass(t)
}

// How often a run was preempted is kept in the store: with MaxPreemptionRetries 1, a run
// preempted once, then again after the server restarted, fails; it is not retried forever.
func TestClusterPreemptionCountSurvivesRestart(t *testing.T) {
	f := newClusterFixture(t)
	putCluster(t, f.fixture, "spot", compute.TierLowPriority, 1)
	if err := f.c.Store.Cluster.DeleteCompute(t.Context(), "pool"); err != nil {
		t.Fatal(err)
	}
	r := f.create(t, job.Spec{Compute: "spot", Command: "python train.py"})
	first := placeOnNewNodeIn(t, f, "spot", r.ID)
	f.report(t, r.ID, job.Running)
	preempt(t, f, first)
	got := f.run(t, r.ID)
	if got.Status != job.Queued || got.Attempt != 2 || !strings.Contains(got.StatusReason, "preempted (retry 1/1)") {
		t.Fatalf("after the first preemption: %s attempt %d %q", got.Status, got.Attempt, got.StatusReason)
	}
	if tr := f.transitions(t, r.ID); tr[len(tr)-1] != "Running->Queued" {
		t.Errorf("the requeue is not an edge of the run's timeline: %v", tr)
	}

	f.restart(t)
	f.clock.Advance(time.Minute)
	second := placeOnNewNodeIn(t, f, "spot", r.ID)
	preempt(t, f, second)
	got = f.run(t, r.ID)
	if got.Status != job.Failed || !strings.Contains(got.StatusReason, "2 preemptions exceed the retry limit 1") {
		t.Errorf("preempted again after a restart: %s attempt %d %q", got.Status, got.Attempt, got.StatusReason)
	}
}

// placeOnNewNodeIn is placeOnNewNode on any cluster.
func placeOnNewNodeIn(t *testing.T, f *clusterFixture, pool, runID string) string {
	t.Helper()
	f.pass(t)
	ns, _ := f.c.Store.Cluster.Nodes(t.Context(), store.NodeFilter{Pool: pool, States: []compute.NodeState{compute.NodeProvisioning}})
	if len(ns) != 1 {
		t.Fatalf("nodes of %s %+v, want one provisioning", pool, ns)
	}
	fresh := ns[0]
	join(t, f, fresh.ID)
	f.pass(t)
	if r := f.run(t, runID); len(r.Handle) == 0 || r.Placement.Rank(fresh.ID) != 0 {
		t.Fatalf("run %s not placed on %s: %s", runID, fresh.ID, r.StatusReason)
	}
	return fresh.ID
}

// A cluster whose provider fails backs off, and a restart does not reset the backoff: the
// restarted server neither retries at once nor forgets why the run waits.
func TestClusterBackoffSurvivesRestart(t *testing.T) {
	f := newClusterFixture(t)
	f.prov.createErr = errors.New("create hook: exit status 1: quota exceeded in region")
	r := f.create(t, job.Spec{Compute: "pool", Command: "python train.py"})
	f.pass(t)
	f.pass(t)
	if st, _, _ := f.c.Store.Cluster.PoolState(t.Context(), "pool"); st.Failures != 1 {
		t.Fatalf("failures recorded %d, want 1", st.Failures)
	}
	f.prov.mu.Lock()
	f.prov.createErr = nil
	f.prov.mu.Unlock()

	f.restart(t)
	f.clock.Advance(time.Second)
	f.pass(t)
	if len(f.prov.created) != 0 || len(f.nodes(t)) != 0 {
		t.Errorf("a restarted server created nodes %v during the backoff", f.prov.created)
	}
	if got := f.run(t, r.ID).StatusReason; !strings.Contains(got, "provisioning is failing") || !strings.Contains(got, "quota exceeded in region") {
		t.Errorf("after a restart the waiting run says %q", got)
	}
	f.clock.Advance(time.Minute) // past the backoff
	f.pass(t)
	if len(f.prov.created) != 1 {
		t.Errorf("after the backoff: created %v", f.prov.created)
	}
}

// A run whose cancel was requested and whose node is then deleted ends Canceled: the requeue
// edge does not bring back a run the user stopped.
func TestClusterDeleteNodeOfCanceledRun(t *testing.T) {
	f := newClusterFixture(t)
	r := f.create(t, job.Spec{Compute: "pool", Command: "sleep 600"})
	id := placeOnNewNode(t, f, r.ID)
	f.report(t, r.ID, job.Running)
	if _, err := f.c.Cancel(t.Context(), r.ID); err != nil {
		t.Fatal(err)
	}
	f.pass(t)
	out, err := f.cl.DeleteNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	f.cl.Wait()
	if got := f.run(t, r.ID); got.Status != job.Canceled || got.Attempt != 1 || len(out.Requeued) != 0 {
		t.Errorf("canceled run on a deleted node: %s attempt %d, requeued %v", got.Status, got.Attempt, out.Requeued)
	}
}

// Runs that name a small request share a node: two runs of half a core each on a 2-core node
// both start on it, where taking the node's memory would have let one run at a time.
func TestClusterSmallRequestsShareANode(t *testing.T) {
	f := newClusterFixture(t)
	half := job.Resources{Properties: map[string]any{"cores": 0.5}}
	a := f.create(t, job.Spec{Compute: "pool", Command: "true", Resources: half})
	b := f.create(t, job.Spec{Compute: "pool", Command: "true", Resources: half})
	id := placeOnNewNode(t, f, a.ID)
	if got := f.run(t, b.ID); len(got.Handle) == 0 || got.Placement.Rank(id) != 0 {
		t.Errorf("the second small run waits: %s", got.StatusReason)
	}
	pending, _ := f.c.Store.Cluster.Assignments(t.Context(), id, true)
	if len(pending) != 2 {
		t.Errorf("node %s has %d assignments, want both runs", id, len(pending))
	}
}

// A run placed by a server that stopped before handing it to its nodes is handed to the same
// nodes by the next server.
func TestClusterPlacedRunIsSubmittedAfterRestart(t *testing.T) {
	f := newClusterFixture(t)
	r := f.create(t, job.Spec{Compute: "pool", Command: "true"})
	f.pass(t)
	id := f.nodes(t)[0].ID
	join(t, f, id)
	// What a server that stopped right after recording the placement leaves.
	p := job.Placement{Nodes: []string{id}}
	if err := f.c.Store.Cluster.SetPlacement(t.Context(), r.ID, 1, p, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	f.restart(t)
	f.pass(t)
	got := f.run(t, r.ID)
	if len(got.Handle) == 0 || !got.Placement.Equal(&p) {
		t.Fatalf("after the restart: handle %s placement %+v (%s)", got.Handle, got.Placement, got.StatusReason)
	}
	if pending, _ := f.c.Store.Cluster.Assignments(t.Context(), id, true); len(pending) != 1 || pending[0].RunID != r.ID {
		t.Errorf("work of %s: %+v", id, pending)
	}
}

// clusterRuns is the controller as the dispatcher's run core, with tokens "token-<run>".
type clusterRuns struct{ *Controller }

func (clusterRuns) RunToken(id string) string { return "token-" + id }
