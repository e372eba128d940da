package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The latest good checkpoint is kept: a later save replaces it, a delayed older one does not,
// a retry of the same save is accepted, and a save from another attempt is refused.
func TestCheckpointKeepsTheLatestGoodSave(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	createRun(t, s, "r1")
	if _, err := s.Runs.LatestCheckpoint(ctx, "r1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a run without saves: %v, want ErrNotFound", err)
	}
	at := time.Unix(1700000000, 0).UTC()
	cp := func(manifest string, saved time.Duration) Checkpoint {
		return Checkpoint{RunID: "r1", Attempt: 1, Manifest: manifest, Files: 1, Bytes: 2, SavedAt: at.Add(saved), CommittedAt: at.Add(saved + time.Second)}
	}
	for _, c := range []Checkpoint{cp("m1", 0), cp("m2", time.Minute), cp("m1", 0), cp("m2", time.Minute)} {
		if err := s.Runs.CommitCheckpoint(ctx, c); err != nil {
			t.Fatalf("commit %s: %v", c.Manifest, err)
		}
	}
	got, err := s.Runs.LatestCheckpoint(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp("m2", time.Minute), *got); diff != "" {
		t.Errorf("latest checkpoint (-want +got):\n%s", diff)
	}
	stale := cp("m3", 2*time.Minute)
	stale.Attempt = 2
	if err := s.Runs.CommitCheckpoint(ctx, stale); !errors.Is(err, ErrStale) {
		t.Errorf("a save of attempt 2 while the run is on attempt 1: %v, want ErrStale", err)
	}
}

// A preemption's loss is recorded with it and read back in attempt order; a requeue that was
// no preemption records nothing.
func TestPreemptionLossIsRecorded(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	createRun(t, s, "r1")
	at := time.Unix(1700000000, 0).UTC()
	started, saved := at.Add(-time.Minute), at.Add(-10*time.Second)
	if err := s.Cluster.RecordPreemption(ctx, "r1", 1, "n1", at); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.RecordPreemption(ctx, "r1", 2, "n2", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, attempt := range []int{1, 3} { // attempt 3 was not preempted
		if err := s.Runs.SetPreemptionLoss(ctx, "r1", attempt, &started, &saved); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Runs.RunPreemptions(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Preemption{{Attempt: 1, Node: "n1", At: at, StartedAt: &started, CheckpointAt: &saved},
		{Attempt: 2, Node: "n2", At: at.Add(time.Hour)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("preemptions (-want +got):\n%s", diff)
	}
}
