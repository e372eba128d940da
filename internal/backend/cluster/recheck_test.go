package cluster

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
)

// A pass that moved runs asks for the next pass; one that changed nothing asks to be called
// again only after Recheck, so that a queue that cannot move costs a pass per Recheck, not one
// per tick of the controller.
func TestWake(t *testing.T) {
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		plan backend.Plan
		want time.Time
	}{
		{"nothing moved, runs wait", backend.Plan{Waiting: []backend.RunNote{{Run: "a", Reason: "waiting"}}}, now.Add(10 * time.Second)},
		{"nothing at all", backend.Plan{}, now.Add(10 * time.Second)},
		{"a run placed", backend.Plan{Placed: []backend.Placed{{Run: "a"}}}, time.Time{}},
		{"a run requeued", backend.Plan{Requeue: []backend.RunNote{{Run: "a"}}}, time.Time{}},
		{"a run failed", backend.Plan{Fail: []backend.RunNote{{Run: "a"}}}, time.Time{}},
	} {
		if got := wake(c.plan, now, (&Backend{}).recheck()); !got.Equal(c.want) {
			t.Errorf("%s: wake = %s, want %s", c.name, got, c.want)
		}
	}
}
