package cluster

import (
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// NodeView is a node's API view; pending is its unacknowledged work (nil to leave it out).
func NodeView(n *store.Node, pending []store.Assignment) api.Node {
	v := api.Node{
		ID: n.ID, Pool: n.Pool, State: string(n.State), StateReason: n.StateReason, Size: n.Size,
		LowPriority: n.LowPriority, Capacity: n.Capacity, Allocated: n.Allocated, GPUs: n.GPUs,
		Labels: n.Labels, Info: n.Info, ProviderID: n.ProviderID, CreatedAt: n.CreatedAt,
		JoinDeadline: optTime(n.JoinDeadline), JoinedAt: optTime(n.JoinedAt),
		LastHeartbeat: optTime(n.LastHeartbeat), IdleSince: optTime(n.IdleSince),
	}
	for _, r := range n.Runs {
		ar := api.AgentRun{RunID: r.RunID, PID: r.PID, Alive: r.Alive}
		if f := r.Final; f != nil {
			ar.Final = &job.Result{State: f.State, ExitCode: f.ExitCode, Reason: f.Reason, Time: f.Time}
		}
		v.Runs = append(v.Runs, ar)
	}
	for _, a := range pending {
		v.Pending = append(v.Pending, api.NodeWork{ID: a.ID, Kind: string(a.Kind), RunID: a.RunID,
			CreatedAt: a.CreatedAt, DeliveredAt: optTime(a.DeliveredAt)})
	}
	return v
}

// EventView is a timeline entry's API view.
func EventView(e store.NodeEvent) api.NodeEvent {
	return api.NodeEvent{Time: e.Time, Node: e.NodeID, From: string(e.From), To: string(e.To), Reason: e.Reason}
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
