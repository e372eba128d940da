package cluster

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// spotCloud is a provider of low-priority machines whose creates fail while failing is set,
// and which reports the machines in preempted as taken back.
type spotCloud struct {
	mu        sync.Mutex
	failing   bool
	created   int
	preempted []string
}

func (p *spotCloud) Create(context.Context, provider.CreateRequest) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created++
	if p.failing {
		return "", errors.New("no capacity in the region")
	}
	return "vm", nil
}

func (p *spotCloud) Delete(context.Context, provider.DeleteRequest) error { return nil }

func (p *spotCloud) Preempted(context.Context) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.preempted, nil
}

var spotSize = sizes.Size{Name: "spot-4", Cores: 4, MemoryBytes: 16 * resources.Gi, Family: "spot"}

// spotWorkspace is a workspace's store with a low-priority cluster "spot" of at most one node;
// restart returns a fresh cluster backend over it, as a restarted server builds one.
type spotWorkspace struct {
	st    *store.Store
	cloud *spotCloud
	clock *clock
}

func newSpotWorkspace(t *testing.T) *spotWorkspace {
	t.Helper()
	d, c := newDispatcher(t)
	w := &spotWorkspace{st: d.Store, cloud: &spotCloud{}, clock: c}
	target := backendtest.Target(t, compute.Spec{Name: "spot", Type: compute.TypeCluster, Cluster: &compute.ClusterSpec{
		Size: spotSize.Name, Tier: compute.TierLowPriority, MaxInstances: 1, IdleTimeBeforeScaleDown: 3600,
		MaxProvisionRetries: 5}})
	if err := w.st.Cluster.PutCompute(t.Context(), target); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *spotWorkspace) restart() *Backend {
	d := &Dispatcher{Store: w.st, Key: []byte("key"), Runs: testRuns{}, Now: w.clock.now}
	return &Backend{Store: w.st, Agents: d, Now: w.clock.now, JoinURL: func() string { return "http://ws" },
		Sizes:    func(context.Context) (*sizes.Catalog, error) { return sizes.NewCatalog([]sizes.Size{spotSize}), nil },
		Provider: func(compute.Spec) (provider.Provider, error) { return w.cloud, nil },
		Policy:   autoscaler.Policy{MaxPreemptionRetries: 1}}
}

// joinNode adds a joined node of the cluster whose machine the provider calls vm-<n>.
func (w *spotWorkspace) joinNode(t *testing.T, b *Backend, machine string) string {
	t.Helper()
	n, tok, err := b.Agents.CreateNode(t.Context(), NewNode{Pool: "spot", Size: spotSize, LowPriority: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Agents.SetProviderID(t.Context(), n.ID, machine); err != nil {
		t.Fatal(err)
	}
	in := api.AgentInfo{Capacity: spotSize.Vector()}
	if _, err := b.Agents.Join(t.Context(), tok, api.JoinRequest{AgentInfo: in}); err != nil {
		t.Fatal(err)
	}
	return n.ID
}

// runOn records run r1's attempt running on node.
func (w *spotWorkspace) runOn(t *testing.T, attempt int, node string) *job.Run {
	t.Helper()
	r := &job.Run{ID: "r1", Compute: "spot", Status: job.Running, Attempt: attempt, Spec: job.Spec{Compute: "spot"},
		Placement: &job.Placement{Nodes: []string{node}}, Handle: backend.Handle(`{"run":"r1","pool":"spot","nodes":["` + node + `"]}`),
		CreatedAt: w.clock.now()}
	ctx := t.Context()
	if attempt == 1 {
		if err := w.st.RunWrites.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	_, err := w.st.RunWrites.UpdateRun(ctx, "r1", func(old *job.Run) ([]job.Event, error) {
		old.Status, old.Attempt, old.Placement, old.Handle = r.Status, r.Attempt, r.Placement, r.Handle
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A run's preemptions are counted in the store: a server restarted between two preemptions
// still knows the first, so the second one exceeds max 1 retry and fails the run instead of
// requeueing it forever.
func TestPreemptionCountSurvivesRestart(t *testing.T) {
	w := newSpotWorkspace(t)
	ctx := t.Context()
	b := w.restart()
	r := w.runOn(t, 1, w.joinNode(t, b, "vm-1"))
	w.cloud.preempted = []string{"vm-1"}
	plan, err := b.Place(ctx, backend.PlaceInput{Now: w.clock.now(), Runs: []*job.Run{r}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Requeue) != 1 || plan.Requeue[0].Run != "r1" || len(plan.Fail) != 0 {
		t.Fatalf("first preemption: plan %+v, want r1 requeued", plan)
	}
	b.Wait()

	w.clock.advance(time.Minute)
	b = w.restart() // the server restarts between the two preemptions
	r = w.runOn(t, 2, w.joinNode(t, b, "vm-2"))
	w.cloud.preempted = []string{"vm-2"}
	plan, err = b.Place(ctx, backend.PlaceInput{Now: w.clock.now(), Runs: []*job.Run{r}})
	if err != nil {
		t.Fatal(err)
	}
	b.Wait()
	if len(plan.Fail) != 1 || plan.Fail[0].Run != "r1" || len(plan.Requeue) != 0 {
		t.Fatalf("second preemption after a restart: plan %+v, want r1 failed (max 1 retry)", plan)
	}
	if !strings.Contains(plan.Fail[0].Reason, "preempt") {
		t.Errorf("fail reason %q does not say it was preempted", plan.Fail[0].Reason)
	}
}

// A cluster whose provider fails keeps backing off after a restart, and its waiting runs still
// say why: the failures are in the store, not in the backend that saw them.
func TestProvisioningBackoffSurvivesRestart(t *testing.T) {
	w := newSpotWorkspace(t)
	ctx := t.Context()
	w.cloud.failing = true
	queued := &job.Run{ID: "r1", Compute: "spot", Status: job.Queued, Spec: job.Spec{Compute: "spot"}, CreatedAt: w.clock.now()}
	if err := w.st.RunWrites.CreateRun(ctx, queued); err != nil {
		t.Fatal(err)
	}
	b := w.restart()
	if _, err := b.Place(ctx, backend.PlaceInput{Now: w.clock.now(), Runs: []*job.Run{queued}}); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	if w.cloud.created != 1 {
		t.Fatalf("%d creates, want 1", w.cloud.created)
	}

	w.clock.advance(time.Second)
	b = w.restart()
	plan, err := b.Place(ctx, backend.PlaceInput{Now: w.clock.now(), Runs: []*job.Run{queued}})
	if err != nil {
		t.Fatal(err)
	}
	b.Wait()
	if w.cloud.created != 1 {
		t.Errorf("the restarted server created %d more machines at once; want it to keep backing off", w.cloud.created-1)
	}
	if len(plan.Waiting) != 1 || !strings.Contains(plan.Waiting[0].Reason, "no capacity in the region") {
		t.Errorf("waiting after the restart: %+v, want the provisioning failure in the reason", plan.Waiting)
	}
}
