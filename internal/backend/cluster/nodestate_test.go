package cluster

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

func TestOccupancy(t *testing.T) {
	alive := []api.AgentRun{{RunID: "a", Alive: true}, {RunID: "b"}}
	ended := []api.AgentRun{{RunID: "b"}}
	tests := []struct {
		name    string
		from    compute.NodeState
		runs    []api.AgentRun
		pending int
		leaving bool
		want    compute.NodeState
		why     string
	}{
		{"joins idle", compute.NodeProvisioning, nil, 0, false, compute.NodeIdle, "the agent joined; no runs"},
		{"joins busy", compute.NodeProvisioning, alive, 0, false, compute.NodeRunning, "the agent joined; 1 run"},
		{"ended runs do not count", compute.NodeRunning, ended, 0, false, compute.NodeIdle, "no runs"},
		{"waiting assignment counts", compute.NodeIdle, nil, 2, false, compute.NodeRunning, "2 runs"},
		{"back from unusable", compute.NodeUnusable, alive, 0, false, compute.NodeRunning, "the agent is back; 1 run"},
		{"leaving", compute.NodeRunning, alive, 0, true, compute.NodeUnusable, "the agent stopped"},
		{"releasing stays", compute.NodeReleasing, alive, 0, true, compute.NodeReleasing, ""},
		{"preempted stays", compute.NodePreempted, nil, 0, false, compute.NodePreempted, ""},
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
		from, to  compute.NodeState
		idleSince time.Time
		event     bool
		wantIdle  time.Time
	}{
		{"same state", compute.NodeIdle, compute.NodeIdle, earlier, false, earlier},
		{"idle to running is occupancy", compute.NodeIdle, compute.NodeRunning, earlier, false, time.Time{}},
		{"running to idle starts the idle clock", compute.NodeRunning, compute.NodeIdle, time.Time{}, false, now},
		{"join", compute.NodeProvisioning, compute.NodeIdle, time.Time{}, true, now},
		{"release stops the idle clock", compute.NodeIdle, compute.NodeReleasing, earlier, true, time.Time{}},
		{"unusable", compute.NodeRunning, compute.NodeUnusable, time.Time{}, true, time.Time{}},
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
