package dispatch

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
)

func TestOccupancy(t *testing.T) {
	alive := []api.AgentRun{{RunID: "a", Alive: true}, {RunID: "b"}}
	ended := []api.AgentRun{{RunID: "b"}}
	tests := []struct {
		name    string
		from    store.NodeState
		runs    []api.AgentRun
		pending int
		leaving bool
		want    store.NodeState
		why     string
	}{
		{"joins idle", store.NodeProvisioning, nil, 0, false, store.NodeIdle, "the agent joined; no runs"},
		{"joins busy", store.NodeProvisioning, alive, 0, false, store.NodeRunning, "the agent joined; 1 runs"},
		{"ended runs do not count", store.NodeRunning, ended, 0, false, store.NodeIdle, "no runs"},
		{"waiting assignment counts", store.NodeIdle, nil, 2, false, store.NodeRunning, "2 runs"},
		{"back from unusable", store.NodeUnusable, alive, 0, false, store.NodeRunning, "the agent is back; 1 runs"},
		{"leaving", store.NodeRunning, alive, 0, true, store.NodeUnusable, "the agent stopped"},
		{"releasing stays", store.NodeReleasing, alive, 0, true, store.NodeReleasing, ""},
		{"preempted stays", store.NodePreempted, nil, 0, false, store.NodePreempted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := occupancy(tt.from, tt.runs, tt.pending, tt.leaving)
			if got != tt.want || why != tt.why {
				t.Errorf("occupancy = %s %q, want %s %q", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestTransition(t *testing.T) {
	now := time.Unix(100, 0)
	earlier := time.Unix(50, 0)
	tests := []struct {
		name      string
		from, to  store.NodeState
		idleSince time.Time
		event     bool
		wantIdle  time.Time
	}{
		{"same state", store.NodeIdle, store.NodeIdle, earlier, false, earlier},
		{"idle to running is occupancy", store.NodeIdle, store.NodeRunning, earlier, false, time.Time{}},
		{"running to idle starts the idle clock", store.NodeRunning, store.NodeIdle, time.Time{}, false, now},
		{"join", store.NodeProvisioning, store.NodeIdle, time.Time{}, true, now},
		{"release stops the idle clock", store.NodeIdle, store.NodeReleasing, earlier, true, time.Time{}},
		{"unusable", store.NodeRunning, store.NodeUnusable, time.Time{}, true, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &store.Node{State: tt.from, IdleSince: tt.idleSince}
			evs := transition(n, tt.to, "why", now)
			if n.State != tt.to || (len(evs) == 1) != tt.event {
				t.Errorf("state %s, events %+v", n.State, evs)
			}
			if !n.IdleSince.Equal(tt.wantIdle) {
				t.Errorf("IdleSince = %v, want %v", n.IdleSince, tt.wantIdle)
			}
		})
	}
}
