package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// CancelsOwed lists the job runs that ended Canceled, after the given time, with a handle and
// no cancel taken by their backend: on both dialects (HANGAR_TEST_STORE=postgres).
func TestCancelsOwed(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	t0 := time.Unix(1700000000, 0).UTC()
	runs := []struct {
		id     string
		state  job.State
		handle string
		sent   bool
		ended  time.Duration // after t0
	}{
		{"owed", job.Canceled, `{"pod":"p"}`, false, time.Minute},
		{"owed-earlier", job.Canceled, `{"pod":"q"}`, false, 30 * time.Second},
		{"taken", job.Canceled, `{"pod":"r"}`, true, time.Minute},
		{"never-handed", job.Canceled, "", false, time.Minute},
		{"failed", job.Failed, `{"pod":"s"}`, false, time.Minute},
		{"too-old", job.Canceled, `{"pod":"t"}`, false, -time.Minute},
		{"running", job.Running, `{"pod":"u"}`, false, 0},
	}
	for _, r := range runs {
		createTestRun(t, s, r.id)
		if _, err := s.RunWrites.UpdateRun(ctx, r.id, func(run *job.Run) ([]job.Event, error) {
			run.Status, run.Handle, run.CancelSent = r.state, json.RawMessage(r.handle), r.sent
			if r.state.Terminal() {
				end := t0.Add(r.ended)
				run.EndedAt = &end
			}
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Runs.CancelsOwed(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if diff := cmp.Diff([]string{"owed-earlier", "owed"}, ids); diff != "" {
		t.Errorf("runs owed a cancel (-want +got):\n%s", diff)
	}
}
