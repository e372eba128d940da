package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/backend/local"
)

func TestTokenAttempt(t *testing.T) {
	for tok, want := range map[string]int{"run_1.3.1700000000.abcd": 3, "run_1.abcd": 0, "": 0, "r.x.1.a": 0} {
		if got := tokenAttempt(tok); got != want {
			t.Errorf("tokenAttempt(%q) = %d, want %d", tok, got, want)
		}
	}
}

// A later attempt of a run assigned to a node that ran an earlier one (a multi-node run
// requeued onto its surviving node) finds the old directory moved aside; the same attempt
// again, or a directory without its attempt, is left alone.
func TestRetireEarlierAttempt(t *testing.T) {
	root := t.TempDir()
	r := &runs{sup: &local.Backend{Root: root}, known: map[string]*runEntry{}, now: time.Now}
	dir := r.sup.RunDir("r1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if r.retire("r1", 2) {
		t.Fatal("retired a directory that does not say its attempt")
	}
	if err := os.WriteFile(filepath.Join(dir, attemptFile), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r.retire("r1", 1) {
		t.Fatal("retired the directory of the same attempt")
	}
	if !r.retire("r1", 2) {
		t.Fatal("the directory of attempt 1 was not retired for attempt 2")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the run directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "retired", "r1", "attempt_1", attemptFile)); err != nil {
		t.Errorf("attempt 1's directory is not kept: %v", err)
	}
}

func TestAcked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ack")
	sent := time.Now()
	if acked(path, sent) {
		t.Error("no file: acknowledged")
	}
	os.WriteFile(path, []byte(sent.Add(-time.Minute).UTC().Format(time.RFC3339Nano)+"\n"), 0o644)
	if acked(path, sent) {
		t.Error("an older acknowledgement counts for a new notice")
	}
	os.WriteFile(path, []byte(sent.Add(time.Second).UTC().Format(time.RFC3339Nano)+"\n"), 0o644)
	if !acked(path, sent) {
		t.Error("a newer acknowledgement does not count")
	}
}
