package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

func createRun(t *testing.T, s *Store, id string) {
	t.Helper()
	r := &job.Run{ID: id, Compute: "local", Status: job.Running, CreatedAt: time.Now().UTC(), Attempt: 1}
	if err := s.RunWrites.CreateRun(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

// A part is registered once: a second registration leaves the first, and none is taken once the
// run's artifacts are set.
func TestRunPartsAreWriteOnce(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	createRun(t, s, "r")
	at := time.Unix(1700000000, 0).UTC()
	first := RunPart{RunID: "r", Attempt: 1, Node: 1, Artifacts: "a1", NamedOutputs: map[string]string{"m": "m1"}, RegisteredAt: at}
	got, err := s.Runs.RegisterRunPart(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&first, got); diff != "" {
		t.Errorf("registered part (-want +got):\n%s", diff)
	}
	got, err = s.Runs.RegisterRunPart(ctx, RunPart{RunID: "r", Attempt: 1, Node: 1, Artifacts: "other", RegisteredAt: at.Add(time.Hour)})
	if err != nil || got.Artifacts != "a1" || !got.RegisteredAt.Equal(at) {
		t.Errorf("second registration = %+v, %v; want the first kept", got, err)
	}

	// A failure recorded before the node's part: the part still registers, the first failure stays.
	one := 1
	if err := s.Runs.RecordNodeFailure(ctx, "r", 1, 2, "node 2: boom", &one, at); err != nil {
		t.Fatal(err)
	}
	if err := s.Runs.RecordNodeFailure(ctx, "r", 1, 2, "node 2: later", nil, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Runs.RegisterRunPart(ctx, RunPart{RunID: "r", Attempt: 1, Node: 2, Artifacts: "a2", RegisteredAt: at}); err != nil || got.Artifacts != "a2" {
		t.Fatalf("part of a failed node = %+v, %v", got, err)
	}
	parts, err := s.Runs.RunParts(ctx, "r", 1)
	if err != nil || len(parts) != 2 || parts[1].Failure != "node 2: boom" || parts[1].ExitCode == nil || *parts[1].ExitCode != 1 {
		t.Fatalf("parts = %+v, %v", parts, err)
	}

	// Assembled from nodes 1 and 2 only if those are exactly the registered ones.
	if _, err := s.RunWrites.SetRunArtifacts(ctx, "r", []int{1}, "x", nil, nil); !errors.Is(err, ErrStale) {
		t.Errorf("assembly from a stale set of parts = %v, want ErrStale", err)
	}
	r, err := s.RunWrites.SetRunArtifacts(ctx, "r", []int{1, 2}, "merged", map[string]string{"m": "mm"}, []string{"w"})
	if err != nil || r.ArtifactsHash != "merged" || r.NamedOutputs["m"] != "mm" || !cmp.Equal(r.Warnings, []string{"w"}) {
		t.Fatalf("SetRunArtifacts = %+v, %v", r, err)
	}
	if _, err := s.RunWrites.SetRunArtifacts(ctx, "r", []int{1, 2}, "again", nil, nil); !errors.Is(err, ErrStale) {
		t.Errorf("second assembly = %v, want ErrStale", err)
	}
	got, err = s.Runs.RegisterRunPart(ctx, RunPart{RunID: "r", Attempt: 1, Node: 3, Artifacts: "late", RegisteredAt: at})
	if err != nil || got.Registered() {
		t.Errorf("part after the assembly = %+v, %v; want not registered", got, err)
	}
	if stored, _ := s.Runs.Run(ctx, "r"); stored.ArtifactsHash != "merged" {
		t.Errorf("run artifacts %q, want merged", stored.ArtifactsHash)
	}
}
