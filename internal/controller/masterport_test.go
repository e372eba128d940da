package controller

import (
	"fmt"
	"testing"
)

// A run's rendezvous port stays below Linux's ephemeral range (32768-60999), where a busy node's
// outgoing connections take their local ports.
func TestMasterPortBelowTheEphemeralRange(t *testing.T) {
	seen := map[int]bool{}
	for i := range 5000 {
		id := fmt.Sprintf("run-%d", i)
		p := masterPort(id)
		if p < 20000 || p >= 32768 {
			t.Fatalf("masterPort(%q) = %d, want 20000 <= port < 32768", id, p)
		}
		if masterPort(id) != p {
			t.Fatalf("masterPort(%q) is not stable", id)
		}
		seen[p] = true
	}
	if len(seen) < 4000 {
		t.Errorf("5000 runs share only %d ports", len(seen))
	}
}
