package dispatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hangar-ml/hangar/internal/agent"
	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
)

// Join admits an agent that presents a join token: the node must exist in the token's pool and
// not be on its way out. A node that joined before may join again (a restarted agent).
func (d *Dispatcher) Join(ctx context.Context, joinToken string, req api.JoinRequest) (*api.JoinReply, error) {
	now := d.now()
	pool, nodeID, err := agent.VerifyJoinToken(d.Key, joinToken, now)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnauthorized, err)
	}
	if req.NodeID != "" && req.NodeID != nodeID {
		return nil, fmt.Errorf("%w: the join token is for node %s, not %s", ErrUnauthorized, nodeID, req.NodeID)
	}
	if err := checkInfo(req.AgentInfo); err != nil {
		return nil, err
	}
	_, err = d.Store.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		if n.Pool != pool {
			return nil, fmt.Errorf("%w: the join token is for cluster %s, node %s is in %s", ErrUnauthorized, pool, nodeID, n.Pool)
		}
		if n.State == store.NodeReleasing || n.State == store.NodePreempted {
			return nil, fmt.Errorf("%w: node %s is %s", ErrGone, nodeID, n.State)
		}
		applyInfo(n, req.AgentInfo)
		n.Runs, n.LastHeartbeat = storeRuns(req.Runs), now
		if n.JoinedAt.IsZero() {
			n.JoinedAt = now
		}
		to, why := occupancy(n.State, req.Runs, 0, false)
		return transition(n, to, why, now), nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: node %s is not expected (deleted, or never created)", ErrGone, nodeID)
	}
	if err != nil {
		return nil, err
	}
	d.logger().Info("agent joined", "node", nodeID, "pool", pool, "capacity", req.Capacity.String())
	return &api.JoinReply{NodeID: nodeID, Pool: pool, AgentToken: agent.AgentToken(d.Key, nodeID)}, nil
}

// Authenticate checks that token is the agent token of node nodeID.
func (d *Dispatcher) Authenticate(token, nodeID string) error {
	id, ok := agent.VerifyAgentToken(d.Key, token)
	switch {
	case !ok:
		return fmt.Errorf("%w: missing or invalid agent token", ErrUnauthorized)
	case id != nodeID:
		return fmt.Errorf("%w: this agent token belongs to node %s", ErrUnauthorized, id)
	}
	return nil
}

// Heartbeat records an agent's report and returns its work: assignments with run tokens and
// cancels not yet acknowledged, and whether to release. Work is marked delivered, and sent again
// until acknowledged.
func (d *Dispatcher) Heartbeat(ctx context.Context, nodeID string, hb api.AgentHeartbeat) (*api.HeartbeatReply, error) {
	now := d.now()
	if hb.Register != nil {
		if err := checkInfo(*hb.Register); err != nil {
			return nil, err
		}
	}
	if err := d.Store.AckAssignments(ctx, nodeID, hb.Acks, now); err != nil {
		return nil, err
	}
	pending, err := d.Store.Assignments(ctx, nodeID, true)
	if err != nil {
		return nil, err
	}
	assigns := 0
	for _, a := range pending {
		if a.Kind == store.AssignRun {
			assigns++
		}
	}
	n, err := d.Store.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		if hb.Register != nil {
			applyInfo(n, *hb.Register)
		}
		n.Runs, n.LastHeartbeat = storeRuns(hb.Runs), now
		if n.JoinedAt.IsZero() {
			n.JoinedAt = now
		}
		to, why := occupancy(n.State, hb.Runs, assigns, hb.Leaving)
		return transition(n, to, why, now), nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: node %s no longer exists", ErrGone, nodeID)
	}
	if err != nil {
		return nil, err
	}
	return d.reply(ctx, n, pending, now)
}

func (d *Dispatcher) reply(ctx context.Context, n *store.Node, pending []store.Assignment, now time.Time) (*api.HeartbeatReply, error) {
	out := &api.HeartbeatReply{}
	if n.State == store.NodeReleasing || n.State == store.NodePreempted {
		out.Release, out.Reason = true, n.StateReason
	}
	ids := make([]int64, 0, len(pending))
	for _, a := range pending {
		switch a.Kind {
		case store.AssignRun:
			if d.RunToken == nil {
				return nil, errors.New("dispatch: no RunToken to send with assignments")
			}
			out.Assignments = append(out.Assignments, api.RunAssignment{ID: a.ID, RunID: a.RunID, Token: d.RunToken(a.RunID)})
		case store.CancelRun:
			out.Cancels = append(out.Cancels, api.RunCancel{ID: a.ID, RunID: a.RunID})
		}
		if a.DeliveredAt.IsZero() {
			ids = append(ids, a.ID)
		}
	}
	if err := d.Store.MarkDelivered(ctx, n.ID, ids, now); err != nil {
		return nil, err
	}
	return out, nil
}

func checkInfo(in api.AgentInfo) error {
	if in.Capacity.MilliCPU <= 0 || in.Capacity.Memory <= 0 || in.Capacity.GPU < 0 {
		return fmt.Errorf("%w: capacity must have cores and memory, got %s", ErrInvalid, in.Capacity)
	}
	if int64(len(in.GPUs)) != in.Capacity.GPU {
		return fmt.Errorf("%w: capacity has %d GPUs but %d are listed", ErrInvalid, in.Capacity.GPU, len(in.GPUs))
	}
	return nil
}

// applyInfo records what an agent offers; its labels are added to the node's own.
func applyInfo(n *store.Node, in api.AgentInfo) {
	n.Capacity, n.GPUs, n.Info = in.Capacity, in.GPUs, in.Node
	if len(in.Labels) > 0 {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		maps.Copy(n.Labels, in.Labels)
	}
}

func storeRuns(in []api.AgentRun) []store.NodeRun {
	out := make([]store.NodeRun, 0, len(in))
	for _, r := range in {
		nr := store.NodeRun{RunID: r.RunID, PID: r.PID, Alive: r.Alive, Reason: r.Reason}
		if f := r.Final; f != nil {
			nr.Final = &store.RunResult{State: f.State, ExitCode: f.ExitCode, Reason: f.Reason, Time: f.Time}
		}
		out = append(out, nr)
	}
	return out
}
