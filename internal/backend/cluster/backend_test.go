package cluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/store"
)

// deleteRecorder is a provider that only records deletions.
type deleteRecorder struct {
	mu      sync.Mutex
	deleted []string
}

func (p *deleteRecorder) Create(context.Context, provider.CreateRequest) (string, error) {
	return "", errors.New("not used")
}

func (p *deleteRecorder) Delete(_ context.Context, req provider.DeleteRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleted = append(p.deleted, req.ProviderID)
	return nil
}

func newBackend(t *testing.T) (*Backend, *clock) {
	t.Helper()
	d, c := newDispatcher(t)
	return &Backend{Store: d.Store, Agents: d, Now: c.now}, c
}

// A node removed while its provider was still creating the machine has that machine deleted as
// soon as it exists.
func TestMachineOfRemovedNodeIsDeleted(t *testing.T) {
	b, _ := newBackend(t)
	n, _, err := b.Agents.CreateNode(t.Context(), NewNode{Pool: "pool"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Agents.Delete(t.Context(), n.ID, ReasonUserDeleted); err != nil {
		t.Fatal(err)
	}
	prov := &deleteRecorder{}
	spec := compute.Spec{Name: "pool", Type: compute.TypeCluster, Cluster: &compute.ClusterSpec{}}
	b.machineCreated(t.Context(), spec, prov, n.ID, "vm-late")
	if !slices.Equal(prov.deleted, []string{"vm-late"}) {
		t.Errorf("provider deletes %v, want the late machine", prov.deleted)
	}
}

// Submit hands a placed run to every node's agent (again harmlessly); Status is what node 0's
// agent reports; Cancel reaches every node and is nil once the nodes are gone; a handle of
// another backend is refused.
func TestSubmitStatusCancel(t *testing.T) {
	b, _ := newBackend(t)
	ctx := t.Context()
	n1, n2 := joined(t, b.Agents), joined(t, b.Agents)
	target := compute.Target{Name: "p", Type: compute.TypeCluster, Properties: []byte(`{"spec":{"name":"p","type":"amlcompute"}}`)}
	if err := b.Store.Cluster.PutCompute(ctx, target); err != nil {
		t.Fatal(err)
	}
	l := backend.Launch{RunID: "r1", Target: target, Attempt: 1}
	if _, err := b.Submit(ctx, l); err == nil || !strings.Contains(err.Error(), "no placement") {
		t.Errorf("Submit without a placement = %v", err)
	}
	l.Placement = &job.Placement{Nodes: []string{n2, n1}}
	h, err := b.Submit(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := b.Submit(ctx, l); err != nil || string(again) != string(h) {
		t.Errorf("Submit again = %s, %v; want %s", again, err, h)
	}
	for _, n := range []string{n1, n2} {
		if work, _ := b.Store.Cluster.Assignments(ctx, n, true); len(work) != 1 || work[0].Kind != store.AssignRun {
			t.Errorf("work of %s: %+v", n, work)
		}
	}
	if st, err := b.Status(ctx, h); err != nil || !st.Alive || st.Reason != "assigned to node "+n2 {
		t.Errorf("Status before the agent reports = %+v, %v", st, err)
	}
	done := &job.Result{State: job.Completed}
	if _, err := b.Agents.Heartbeat(ctx, n2, api.AgentHeartbeat{Runs: []api.AgentRun{{RunID: "r1", Final: done}}}); err != nil {
		t.Fatal(err)
	}
	if st, err := b.Status(ctx, h); err != nil || st.Alive || st.Final == nil || st.Final.State != job.Completed {
		t.Errorf("Status after node 0 reported the end = %+v, %v", st, err)
	}
	if err := b.Cancel(ctx, h); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{n1, n2} {
		if err := b.Agents.Delete(ctx, n, "gone"); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Cancel(ctx, h); err != nil {
		t.Errorf("Cancel with the nodes gone = %v", err)
	}
	if st, err := b.Status(ctx, h); err != nil || st.Alive || !strings.Contains(st.Reason, "removed") {
		t.Errorf("Status with the nodes gone = %+v, %v", st, err)
	}
	for _, foreign := range []backend.Handle{
		backend.Handle(`{"pid":42,"start_time":7,"dir":"/tmp/r1"}`),              // a local run's
		backend.Handle(`{"run":"r1","pool":"elsewhere","nodes":["` + n1 + `"]}`), // of a cluster this workspace has not
	} {
		if _, err := b.Status(ctx, foreign); !errors.Is(err, backend.ErrBadHandle) {
			t.Errorf("Status(%s) = %v, want ErrBadHandle", foreign, err)
		}
		if err := b.Cancel(ctx, foreign); !errors.Is(err, backend.ErrBadHandle) {
			t.Errorf("Cancel(%s) = %v, want ErrBadHandle", foreign, err)
		}
	}
}
