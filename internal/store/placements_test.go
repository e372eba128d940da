package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// A placement is the run's data for its attempt: read with the run (one and in lists), gone
// from view once the run moves on to another attempt, refused for a run that ended.
func TestPlacementIsReadWithTheRunForItsAttempt(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	createRun(t, s, "r1")
	createRun(t, s, "r2")
	at := time.Unix(1700000000, 0).UTC()
	p := job.Placement{Nodes: []string{"n2", "n1"}, GPUs: map[string][]string{"n2": {"0", "3"}}}
	if err := s.Cluster.SetPlacement(ctx, "r1", 1, p, at); err != nil {
		t.Fatal(err)
	}
	got, err := s.Runs.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&p, got.Placement); diff != "" {
		t.Errorf("placement read with the run (-want +got):\n%s", diff)
	}
	list, err := s.Runs.List(ctx, RunFilter{Active: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if want := map[string]*job.Placement{"r1": &p, "r2": nil}[r.ID]; !r.Placement.Equal(want) {
			t.Errorf("%s listed with placement %+v, want %+v", r.ID, r.Placement, want)
		}
	}
	if err := s.Cluster.SetPlacement(ctx, "r1", 2, p, at); !errors.Is(err, ErrStale) {
		t.Errorf("placing attempt 2 of a run at attempt 1 = %v, want ErrStale", err)
	}
	if _, err := s.RunWrites.UpdateRun(ctx, "r1", func(r *job.Run) ([]job.Event, error) { r.Attempt = 2; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Runs.Run(ctx, "r1"); got.Placement != nil {
		t.Errorf("attempt 2 shows attempt 1's placement %+v", got.Placement)
	}
	if err := s.Cluster.ClearPlacement(ctx, "r2", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunWrites.UpdateRun(ctx, "r2", func(r *job.Run) ([]job.Event, error) { r.Status = job.Canceled; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.SetPlacement(ctx, "r2", 1, p, at); !errors.Is(err, ErrStale) {
		t.Errorf("placing a canceled run = %v, want ErrStale", err)
	}
}

// Preemption counts and each cluster's backoff and failure are in the database: a server that
// restarts finds them as they were.
func TestClusterDecisionStateSurvivesReopen(t *testing.T) {
	path := testDSN(t)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	createRun(t, s, "r1")
	at := time.Unix(1700000000, 0).UTC()
	for _, attempt := range []int{1, 2, 2} { // the same preemption twice counts once
		if err := s.Cluster.RecordPreemption(ctx, "r1", attempt, "n1", at); err != nil {
			t.Fatal(err)
		}
	}
	want := PoolState{Pool: "gpu", Failures: 3, LastFailure: at, ProvisionError: "create hook: exit status 1",
		LastError: "provisioning node gpu-1 failed", Target: 2, Current: 1, Explain: []string{"scale up 1→2"}, UpdatedAt: at}
	if err := s.Cluster.PutPoolState(ctx, want); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pre, err := s.Cluster.Preemptions(ctx)
	if err != nil || !cmp.Equal(pre, map[string]int{"r1": 2}) {
		t.Errorf("preemptions after reopening: %v, %v", pre, err)
	}
	got, ok, err := s.Cluster.PoolState(ctx, "gpu")
	if err != nil || !ok {
		t.Fatalf("PoolState = %v, %v", ok, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cluster state after reopening (-want +got):\n%s", diff)
	}
	all, err := s.Cluster.PoolStates(ctx)
	if err != nil || len(all) != 1 {
		t.Errorf("PoolStates = %v, %v", all, err)
	}
	if err := s.Cluster.DeletePoolState(ctx, "gpu"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Cluster.PoolState(ctx, "gpu"); ok {
		t.Error("a deleted cluster's state is still there")
	}
}
