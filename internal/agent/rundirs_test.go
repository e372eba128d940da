package agent

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/backend/local"
)

// A run's directory goes once the server recorded its end and the retention passed, with its
// earlier attempts' directories; a run the agent still reports, or one whose end is not
// recorded, keeps its own.
func TestSweepDirs(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	root := t.TempDir()
	r := &runs{sup: &local.Backend{Root: root}, known: map[string]*runEntry{}, keepDirs: 5 * time.Minute,
		log: slog.New(slog.DiscardHandler), now: func() time.Time { return now }}
	for _, d := range []string{"runs/done/wd", "runs/unrecorded/wd", "runs/reported/wd", "retired/done/attempt_1"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.known["done"] = &runEntry{endedAt: now}
	r.known["reported"] = &runEntry{}
	r.forget([]string{"done", "reported"}) // "reported" still runs: the server's word is not taken
	r.markRecorded("reported")             // as if forgotten and then started again
	at := now.Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(r.sup.RunDir("done"), recordedFile), at, at); err != nil {
		t.Fatal(err)
	}

	r.sweepDirs(t.Context())
	if got := present(root, "runs/done", "runs/unrecorded", "runs/reported"); !cmp.Equal(got, []bool{true, true, true}) {
		t.Errorf("within the retention: present %v, want all", got)
	}
	now = now.Add(4 * time.Minute) // the sweep looks again after sweepEvery only: 4 min > 30 s
	r.sweepDirs(t.Context())
	if got := present(root, "runs/done", "retired/done", "runs/unrecorded", "runs/reported"); !cmp.Equal(got, []bool{false, false, true, true}) {
		t.Errorf("after the retention: present %v, want only the unrecorded and the reported run's", got)
	}
}

func present(root string, paths ...string) []bool {
	var out []bool
	for _, p := range paths {
		_, err := os.Stat(filepath.Join(root, p))
		out = append(out, !errors.Is(err, os.ErrNotExist))
	}
	return out
}
