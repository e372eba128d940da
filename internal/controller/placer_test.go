package controller

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// fakePlacer is a backend that places its runs itself: Place returns the plan set, Submit
// records what it was handed.
type fakePlacer struct {
	mu        sync.Mutex
	plan      backend.Plan
	seen      [][]string // the run ids given to each Place
	launches  []backend.Launch
	canceled  []string
	submitErr error
}

func (p *fakePlacer) Place(_ context.Context, in backend.PlaceInput) (backend.Plan, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for _, r := range in.Runs {
		ids = append(ids, r.ID)
	}
	p.seen = append(p.seen, ids)
	plan := p.plan
	p.plan = backend.Plan{}
	return plan, nil
}

func (p *fakePlacer) Submit(_ context.Context, l backend.Launch) (backend.Handle, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.launches = append(p.launches, l)
	if p.submitErr != nil {
		return nil, p.submitErr
	}
	return json.Marshal(map[string]any{"run": l.RunID, "attempt": l.Attempt})
}

func (p *fakePlacer) Status(context.Context, backend.Handle) (backend.Status, error) {
	return backend.Status{Alive: true}, nil
}

func (p *fakePlacer) Cancel(_ context.Context, h backend.Handle) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.canceled = append(p.canceled, string(h))
	return nil
}

// newPlacerFixture is a controller whose cluster targets' backend is a fakePlacer, with one
// cluster target, "pool".
func newPlacerFixture(t *testing.T) (*fixture, *fakePlacer) {
	t.Helper()
	f := newFixture(t)
	p := &fakePlacer{}
	f.c.Backends[compute.TypeCluster] = p
	props, _ := json.Marshal(compute.Stored{Spec: compute.Spec{Name: "pool", Type: compute.TypeCluster,
		Cluster: &compute.ClusterSpec{Size: "any", MaxInstances: 4}}})
	if err := f.c.Store.Cluster.PutCompute(t.Context(), compute.Target{Name: "pool", Type: compute.TypeCluster, Properties: props,
		CreatedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	return f, p
}

// The controller calls a Placer once per pass with its targets' runs and applies the plan: a
// placed run is recorded with its placement and submitted with it; a waiting run shows why and
// is never submitted by the loop itself; an impossible one fails.
func TestPlacerPlanIsApplied(t *testing.T) {
	f, p := newPlacerFixture(t)
	placed := f.create(t, job.Spec{Compute: "pool"})
	waiting := f.create(t, job.Spec{Compute: "pool"})
	impossible := f.create(t, job.Spec{Compute: "pool"})
	local := f.create(t, job.Spec{Compute: "local"})
	where := job.Placement{Nodes: []string{"n2", "n1"}, GPUs: map[string][]string{"n2": {"1"}}}
	p.plan = backend.Plan{
		Placed:  []backend.Placed{{Run: placed.ID, Placement: where}},
		Waiting: []backend.RunNote{{Run: waiting.ID, Reason: "waiting for 2 nodes"}},
		Fail:    []backend.RunNote{{Run: impossible.ID, Reason: "unschedulable: needs 9 nodes"}},
	}
	f.reconcile(t)
	f.reconcile(t)

	for _, ids := range p.seen {
		slices.Sort(ids)
	}
	want := [][]string{{placed.ID, waiting.ID, impossible.ID}, {placed.ID, waiting.ID}}
	for _, ids := range want {
		slices.Sort(ids)
	}
	if !cmp.Equal(p.seen, want) {
		t.Errorf("Place was given %v, want %v (its own targets' active runs, once per pass)", p.seen, want)
	}
	if len(p.launches) != 1 || p.launches[0].RunID != placed.ID || !p.launches[0].Placement.Equal(&where) || p.launches[0].Attempt != 1 {
		t.Fatalf("launches %+v, want the placed run with its placement", p.launches)
	}
	got := f.run(t, placed.ID)
	if len(got.Handle) == 0 || !got.Placement.Equal(&where) {
		t.Errorf("placed run: handle %s, placement %+v", got.Handle, got.Placement)
	}
	if got := f.run(t, waiting.ID); got.Status != job.Queued || got.StatusReason != "waiting for 2 nodes" || len(got.Handle) != 0 {
		t.Errorf("waiting run: %s %q handle %s", got.Status, got.StatusReason, got.Handle)
	}
	if got := f.run(t, impossible.ID); got.Status != job.Failed || got.StatusReason != "unschedulable: needs 9 nodes" {
		t.Errorf("impossible run: %s %q", got.Status, got.StatusReason)
	}
	if got := f.run(t, local.ID); len(got.Handle) == 0 {
		t.Errorf("a run on a target without a Placer was not submitted")
	}
}

// A placed run its backend cannot start there loses its placement and waits to be placed again.
func TestPlacedRunThatCannotStartWaits(t *testing.T) {
	f, p := newPlacerFixture(t)
	r := f.create(t, job.Spec{Compute: "pool"})
	p.submitErr = errors.New("node n1 is releasing")
	p.plan = backend.Plan{Placed: []backend.Placed{{Run: r.ID, Placement: job.Placement{Nodes: []string{"n1"}}}}}
	f.reconcile(t)
	got := f.run(t, r.ID)
	if got.Status != job.Queued || got.Placement != nil || len(got.Handle) != 0 ||
		!strings.Contains(got.StatusReason, "node n1 is releasing; placing it again") {
		t.Errorf("after a failed start: %s placement %+v %q", got.Status, got.Placement, got.StatusReason)
	}
}

// A requeue in a plan is the state machine's requeue edge: the run goes from where it was back to
// Queued as attempt 2, without its handle or placement, its first attempt's log kept and its
// supervisors stopped.
func TestPlacerRequeueIsAnEdge(t *testing.T) {
	f, p := newPlacerFixture(t)
	r := f.create(t, job.Spec{Compute: "pool"})
	p.plan = backend.Plan{Placed: []backend.Placed{{Run: r.ID, Placement: job.Placement{Nodes: []string{"n1"}}}}}
	f.reconcile(t)
	f.report(t, r.ID, job.Running)
	handle := string(f.run(t, r.ID).Handle)
	p.plan = backend.Plan{Requeue: []backend.RunNote{{Run: r.ID, Reason: "requeue run: node n1 preempted"}}}
	f.reconcile(t)

	got := f.run(t, r.ID)
	if got.Status != job.Queued || got.Attempt != 2 || len(got.Handle) != 0 || got.Placement != nil || got.StartedAt != nil {
		t.Errorf("requeued run: %s attempt %d handle %s placement %+v started %v", got.Status, got.Attempt, got.Handle, got.Placement, got.StartedAt)
	}
	if want := "requeue run: node n1 preempted; attempt 2 (the log of attempt 1 is kept as attempt_1/)"; got.StatusReason != want {
		t.Errorf("reason %q, want %q", got.StatusReason, want)
	}
	if tr := f.transitions(t, r.ID); tr[len(tr)-1] != "Running->Queued" {
		t.Errorf("transitions %v, want the requeue edge last", tr)
	}
	if !slices.Equal(p.canceled, []string{handle}) {
		t.Errorf("canceled %v, want the first attempt's handle %s", p.canceled, handle)
	}
	// A supervisor cannot take that edge itself.
	if _, err := f.c.Report(t.Context(), r.ID, api.StatusReport{State: job.Requeued}); err == nil {
		t.Error("a status report of Requeued was accepted")
	}
}

// A run's end wakes the loop: what it held is placed again at once, not at the next tick.
func TestRunEndKicksTheLoop(t *testing.T) {
	f := newFixture(t)
	r := f.create(t, job.Spec{Compute: "local"})
	f.reconcile(t)
	f.report(t, r.ID, job.Running)
	select { // whatever kicks came before
	case <-f.c.kick:
	default:
	}
	f.report(t, r.ID, job.Completed)
	select {
	case <-f.c.kick:
	default:
		t.Error("a run ended and the loop was not kicked")
	}
}
