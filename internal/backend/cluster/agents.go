package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// MaxPoll bounds how long a heartbeat may wait for work, whatever the agent asks.
const MaxPoll = time.Minute

// Join admits an agent that presents a join token: the node must exist in the token's pool and
// not be on its way out. A node that joined before may join again (a restarted agent).
func (d *Dispatcher) Join(ctx context.Context, joinToken string, req api.JoinRequest) (*api.JoinReply, error) {
	now := d.now()
	pool, nodeID, err := tokens.Key(d.Key).VerifyJoin(joinToken, now)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnauthorized, err)
	}
	if req.NodeID != "" && req.NodeID != nodeID {
		return nil, fmt.Errorf("%w: the join token is for node %s, not %s", ErrUnauthorized, nodeID, req.NodeID)
	}
	if err := checkInfo(req.AgentInfo); err != nil {
		return nil, err
	}
	_, err = d.Store.Cluster.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		if n.Pool != pool {
			return nil, fmt.Errorf("%w: the join token is for cluster %s, node %s is in %s", ErrUnauthorized, pool, nodeID, n.Pool)
		}
		if n.State == compute.NodeReleasing || n.State == compute.NodePreempted {
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
	d.changed() // queued runs may fit now
	return &api.JoinReply{NodeID: nodeID, Pool: pool, AgentToken: tokens.Key(d.Key).Agent(nodeID)}, nil
}

// Authenticate checks that token is the agent token of node nodeID.
func (d *Dispatcher) Authenticate(token, nodeID string) error {
	id, ok := tokens.Key(d.Key).VerifyAgent(token)
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
// until acknowledged. With hb.PollMillis, a heartbeat that finds nothing new to send waits up to
// that long (MaxPoll at most) for work to be queued for the node, and returns as soon as it is.
func (d *Dispatcher) Heartbeat(ctx context.Context, nodeID string, hb api.AgentHeartbeat) (*api.HeartbeatReply, error) {
	woken := d.wakers.Wait(nodeID) // before reading the work: anything queued after this wakes us
	n, pending, err := d.record(ctx, nodeID, hb)
	if err != nil {
		return nil, err
	}
	if hb.Activity != nil && d.Instances != nil {
		d.Instances.Activity(ctx, n, *hb.Activity)
	}
	if poll := min(time.Duration(hb.PollMillis)*time.Millisecond, MaxPoll); poll > 0 && !news(n, pending, hb) {
		t := time.NewTimer(poll)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err() // the agent gave up on this call: nothing was sent
		case <-t.C:
		case <-woken:
		}
		if n, err = d.node(ctx, nodeID); err != nil {
			return nil, err
		}
		if pending, err = d.Store.Cluster.Assignments(ctx, nodeID, true); err != nil {
			return nil, err
		}
	}
	rep, err := d.reply(ctx, n, pending, d.now())
	if err != nil {
		return nil, err
	}
	rep.Polled = hb.PollMillis > 0
	if rep.Forget, err = d.forget(ctx, hb.Runs); err != nil {
		return nil, err
	}
	return rep, nil
}

// forget lists the ended runs of a report whose end the workspace has recorded (the run is
// terminal): nobody asks the node about them again. A run the store does not know, or whose
// current attempt goes on (requeued), is reported until the agent's KeepEnded.
func (d *Dispatcher) forget(ctx context.Context, runs []api.AgentRun) ([]string, error) {
	var out []string
	for _, r := range runs {
		if r.Alive {
			continue
		}
		run, err := d.Store.Runs.Run(ctx, r.RunID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue
		case err != nil:
			return nil, err
		case run.Status.Terminal():
			out = append(out, r.RunID)
		}
	}
	return out, nil
}

// record applies an agent's report to its node and returns the node and its pending work.
func (d *Dispatcher) record(ctx context.Context, nodeID string, hb api.AgentHeartbeat) (*store.Node, []store.Assignment, error) {
	now := d.now()
	if hb.Register != nil {
		if err := checkInfo(*hb.Register); err != nil {
			return nil, nil, err
		}
	}
	// The report is recorded before the acknowledgements: work acknowledged is then always in a
	// recorded report, so that Status can tell a run the agent no longer reports (it ended and
	// was forgotten) from one on its way to the agent.
	pending, err := d.Store.Cluster.Assignments(ctx, nodeID, true)
	if err != nil {
		return nil, nil, err
	}
	pending = slices.DeleteFunc(pending, func(a store.Assignment) bool { return slices.Contains(hb.Acks, a.ID) })
	assigns := 0
	for _, a := range pending {
		if a.Kind == store.AssignRun {
			assigns++
		}
	}
	changed := false
	n, err := d.Store.Cluster.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		if hb.Register != nil {
			applyInfo(n, *hb.Register)
		}
		runs := storeRuns(hb.Runs)
		changed = runEnded(n.Runs, runs)
		n.Runs, n.LastHeartbeat = runs, now
		if n.JoinedAt.IsZero() {
			n.JoinedAt = now
		}
		to, why := occupancy(n.State, hb.Runs, assigns, hb.Leaving)
		if hb.Notice && !released(n) { // the autoscaler requeues its runs, once
			to, why = compute.NodePreempted, ReasonNotice
		}
		evs := transition(n, to, why, now)
		changed = changed || len(evs) > 0
		return evs, nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, fmt.Errorf("%w: node %s no longer exists", ErrGone, nodeID)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := d.Store.Cluster.AckAssignments(ctx, nodeID, hb.Acks, now); err != nil {
		return nil, nil, err
	}
	if changed {
		d.changed()
	}
	return n, pending, nil
}

// news reports whether a heartbeat has something to carry back now: work never sent, or a
// release the agent has not heard of.
func news(n *store.Node, pending []store.Assignment, hb api.AgentHeartbeat) bool {
	if released(n) && !hb.Draining {
		return true
	}
	for _, a := range pending {
		if a.DeliveredAt.IsZero() {
			return true
		}
	}
	return false
}

// runEnded reports whether a run alive in the node's last report is not alive in this one.
func runEnded(before, now []store.NodeRun) bool {
	alive := map[string]bool{}
	for _, r := range now {
		alive[r.RunID] = r.Alive
	}
	for _, r := range before {
		if r.Alive && !alive[r.RunID] {
			return true
		}
	}
	return false
}

func released(n *store.Node) bool {
	return n.State == compute.NodeReleasing || n.State == compute.NodePreempted
}

func (d *Dispatcher) reply(ctx context.Context, n *store.Node, pending []store.Assignment, now time.Time) (*api.HeartbeatReply, error) {
	out := &api.HeartbeatReply{}
	if released(n) {
		out.Release, out.Reason = true, n.StateReason
	}
	ids := make([]int64, 0, len(pending))
	for _, a := range pending {
		switch a.Kind {
		case store.AssignRun:
			if d.Runs == nil {
				return nil, errors.New("dispatch: no run core (Runs) to mint the tokens sent with assignments")
			}
			out.Assignments = append(out.Assignments, api.RunAssignment{ID: a.ID, RunID: a.RunID, Token: d.Runs.RunToken(a.RunID)})
		case store.CancelRun:
			out.Cancels = append(out.Cancels, api.RunCancel{ID: a.ID, RunID: a.RunID})
		}
		if a.DeliveredAt.IsZero() {
			ids = append(ids, a.ID)
		}
	}
	if err := d.Store.Cluster.MarkDelivered(ctx, n.ID, ids, now); err != nil {
		return nil, err
	}
	if d.Instances != nil && !out.Release {
		svc := d.Instances.Services(ctx, n)
		out.Jupyter, out.SSHAuthorizedKeys = svc.Jupyter, svc.SSHAuthorizedKeys
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
		out = append(out, store.NodeRun{RunID: r.RunID, PID: r.PID, Alive: r.Alive, Reason: r.Reason, Final: r.Final})
	}
	return out
}
