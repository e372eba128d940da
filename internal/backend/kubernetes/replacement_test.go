package kubernetes

import (
	"context"
	"testing"
	"time"
)

// A cancel's wait for the ReplicaSet's replacement pod leaves the scale-down after it time
// within the cancel's deadline (a slow control plane once used the whole 15 s call, the
// scale-down then failed and the Deployment kept the canceled replica's new pod).
func TestReplacementBudgetLeavesTheScaleDownItsReserve(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		deadline time.Duration // from now; 0: none
		want     time.Duration
	}{
		{"no deadline", 0, replacementWait},
		{"a far deadline", time.Minute, replacementWait},
		{"the controller's 15 s call", 15 * time.Second, 10 * time.Second},
		{"a deadline inside the reserve", 3 * time.Second, 0},
		{"a deadline passed", -time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.deadline != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
				defer cancel()
			}
			if got := replacementBudget(ctx, now); got != tc.want {
				t.Errorf("replacementBudget = %v, want %v", got, tc.want)
			}
		})
	}
}
