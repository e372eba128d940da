package cli

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// A streamed pipeline prints each step once per change of its state (or run), never a step that
// has not started, and says for each change what a user needs: the run, how long it took, whose
// outputs were reused, why it failed or was skipped.
func TestStepChangesAndLines(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.Local)
	t1 := t0.Add(3100 * time.Millisecond)
	now := t0.Add(time.Minute)
	seen := map[string]stepSeen{}
	polls := [][]api.PipelineStep{
		{{Name: "prep", State: "queued", RunID: "pl_prep"}, {Name: "train"}},
		{{Name: "prep", State: "running", RunID: "pl_prep", Started: &t0}, {Name: "train"}},
		{{Name: "prep", State: "running", RunID: "pl_prep", Started: &t0}, {Name: "train"}}, // nothing new
		{{Name: "prep", State: "completed", RunID: "pl_prep", Started: &t0, Ended: &t1},
			{Name: "train", State: "failed", RunID: "pl_train", Started: &t0, Ended: &t1, Reason: "exit code 1\n"},
			{Name: "score", State: "skipped", Reason: "train failed", Ended: &t1},
			{Name: "cached", State: "completed", ReusedFrom: "old_cached"}},
	}
	want := [][]string{
		{"[10:01:00] step prep (run pl_prep): queued"},
		{"[10:00:00] step prep (run pl_prep): running"},
		nil,
		{"[10:00:03] step prep (run pl_prep): completed in 3.1s",
			"[10:00:03] step train (run pl_train): failed: exit code 1",
			"[10:00:03] step score: skipped: train failed",
			"[10:01:00] step cached: completed: reused the outputs of run old_cached"},
	}
	for i, steps := range polls {
		var got []string
		for _, s := range stepChanges(seen, steps) {
			got = append(got, stepLine(s, now))
		}
		if len(got) != len(want[i]) {
			t.Fatalf("poll %d: %q, want %q", i, got, want[i])
		}
		for j := range got {
			if got[j] != want[i][j] {
				t.Errorf("poll %d line %d: %q, want %q", i, j, got[j], want[i][j])
			}
		}
	}
}
