package controller

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// transition moves a run to state `to` through the state machine and records the event.
func (c *Controller) transition(ctx context.Context, id string, to job.State, reason string, exit *int, warnings []string) (*job.Run, error) {
	return c.apply(ctx, id, api.StatusReport{State: to, Reason: reason, ExitCode: exit, Time: c.Now(), Warnings: warnings}, false)
}

// apply applies a status report to a run in one transaction; a report its supervisor sent
// (heard) is also a heartbeat.
func (c *Controller) apply(ctx context.Context, id string, rep api.StatusReport, heard bool) (*job.Run, error) {
	if rep.Time.IsZero() {
		rep.Time = c.Now()
	}
	rep, err := c.Imports.ended(ctx, id, rep) // imports.go: a completing import registers its data first
	if err != nil {
		return nil, err
	}
	now := c.Now()
	r, err := c.Store.RunWrites.UpdateRun(ctx, id, func(r *job.Run) ([]job.Event, error) {
		if r.Status.Terminal() {
			// An ended run's record no longer changes (Ended): a retry of the report that
			// ended it is absorbed as it is, warnings and timings included; any other refused.
			if rep.State == r.Status {
				return nil, nil
			}
			return nil, conflictf("run %s is %s: cannot become %s", r.ID, r.Status, rep.State)
		}
		if heard {
			r.LastHeartbeat = now
		}
		for _, w := range rep.Warnings {
			if !slices.Contains(r.Warnings, w) {
				r.Warnings = append(r.Warnings, w)
			}
		}
		for k, v := range rep.Timings {
			if r.Timings == nil {
				r.Timings = map[string]float64{}
			}
			r.Timings[k] += v
		}
		next, err := job.Next(r.Status, rep.State)
		if err != nil {
			return nil, conflictf("run %s is %s: cannot become %s", r.ID, r.Status, rep.State)
		}
		requeued := rep.State == job.Requeued && next == job.Queued
		if next == r.Status && !requeued {
			return nil, nil
		}
		reason := rep.Reason
		if requeued {
			reason = newAttempt(r, reason)
		}
		ev := job.Event{Time: rep.Time, From: r.Status, To: next, Reason: reason}
		r.Status, r.StatusReason = next, reason
		if next == job.Running && r.StartedAt == nil {
			t := rep.Time
			r.StartedAt = &t
		}
		if next.Terminal() {
			t := rep.Time
			r.EndedAt, r.ExitCode = &t, rep.ExitCode
		}
		return []job.Event{ev}, nil
	})
	if err != nil {
		return nil, mapStoreErr(err)
	}
	c.Changed(id)
	if r.Status.Terminal() {
		c.Log.Info("run ended", "run", id, "status", r.Status, "reason", r.StatusReason)
		c.Kick() // what it held is free: the loop places the next run now, not at its next tick
	}
	return r, nil
}

func mapStoreErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &Error{Kind: NotFound, Msg: err.Error()}
	}
	return err
}

// Report applies a supervisor's status report; the reply tells it about a pending cancel. On a
// multi-node run, node 0 reports the run's phases and end; another node reports only its
// failure (see nodeFailed). The end is applied once the run's artifacts are assembled, so a
// terminal status still means the logs are complete.
func (c *Controller) Report(ctx context.Context, id string, rep api.StatusReport) (*api.StatusReply, error) {
	switch {
	case !rep.State.Valid(): // Requeued, an edge only the controller takes, among others
		return nil, invalidf("state: %q is not a run state", rep.State)
	case rep.Node < 0:
		return nil, invalidf("node_rank: %d is not a node rank", rep.Node)
	case rep.Node > 0:
		return c.nodeFailed(ctx, id, rep)
	}
	if rep.State.Terminal() {
		var err error
		if rep, err = c.ending(ctx, id, rep); err != nil {
			return nil, err
		}
	}
	r, err := c.apply(ctx, id, rep, true)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Kind == Conflict {
			// A late report for a run that already ended (or was canceled): tell the supervisor.
			cur, gerr := c.Store.Runs.Run(ctx, id)
			if gerr == nil && cur.Status.Terminal() {
				return &api.StatusReply{State: cur.Status, Cancel: cur.Status == job.Canceled}, err
			}
		}
		return nil, err
	}
	if rep.State == job.Running && rep.Command != "" {
		// The command its supervisor ran, bound to its inputs and outputs (job show).
		if err := c.Store.RunWrites.SetBoundCommand(ctx, id, rep.Command); err != nil {
			return nil, err
		}
	}
	return reply(r), nil
}

// reply tells a supervisor the run's state; a run the server considers over (canceled, or ended
// while its node was unreachable) is stopped.
func reply(r *job.Run) *api.StatusReply {
	return &api.StatusReply{State: r.Status, Cancel: r.Status == job.CancelRequested || r.Status.Terminal()}
}

// Heartbeat records that a run's supervisor is alive; a NotResponding run recovers its last
// phase. The reply stops the supervisor when the run is over or ending (see stopNodes), and
// carries a fresh token while the run is active (tokens expire: a run of any length renews its
// token this way).
func (c *Controller) Heartbeat(ctx context.Context, id string) (*api.StatusReply, error) {
	rep, r, err := c.heartbeat(ctx, id)
	if err != nil {
		return nil, err
	}
	if !rep.Cancel && nodeCount(r) > 1 {
		if rep.Reason, err = c.stopNodes(ctx, r); err != nil {
			return nil, err
		}
		rep.Cancel = rep.Reason != ""
	}
	if !r.Status.Terminal() {
		rep.Token = c.tokenFor(r)
	}
	return rep, nil
}

func (c *Controller) heartbeat(ctx context.Context, id string) (*api.StatusReply, *job.Run, error) {
	if err := c.touch(ctx, id); err != nil {
		return nil, nil, err
	}
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return nil, nil, mapStoreErr(err)
	}
	if r.Status == job.NotResponding {
		if r, err = c.recover(ctx, r); err != nil {
			return nil, nil, err
		}
	}
	return reply(r), r, nil
}

// recover moves a NotResponding run back to the phase it was in before.
func (c *Controller) recover(ctx context.Context, r *job.Run) (*job.Run, error) {
	events, err := c.Store.Runs.Events(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	prev := job.Running
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].To == job.NotResponding {
			prev = events[i].From
			break
		}
	}
	return c.transition(ctx, r.ID, prev, "heartbeats resumed", nil, nil)
}

// touch records that a run's supervisor was heard from (the heartbeat column alone).
func (c *Controller) touch(ctx context.Context, id string) error {
	now := c.Now()
	if err := c.Store.RunWrites.TouchRun(ctx, id, now); err != nil {
		return mapStoreErr(err)
	}
	c.news.beat(id, now) // the loop's view: the run is not silent
	return nil
}

// Cancel asks for a run to stop. A run not yet handed to a backend is canceled at once.
func (c *Controller) Cancel(ctx context.Context, id string) (*job.Run, error) {
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	if r.Status.Terminal() {
		return nil, conflictf("job %s already ended: %s", id, r.Status)
	}
	isJob, err := c.Store.Tracking.RunIsJob(ctx, id)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	if !isJob {
		// A run logged through the MLflow API (a notebook) has no process to stop: nothing
		// would ever take it out of CancelRequested, so it ends here.
		return c.transition(ctx, id, job.Canceled, "canceled by the user", nil, nil)
	}
	r, err = c.transition(ctx, id, job.CancelRequested, "cancel requested by the user", nil, nil)
	if err != nil {
		return nil, err
	}
	c.Kick()
	return r, nil
}

// RunSpec is what a supervisor fetches to execute a run; on a cluster node it also learns its
// node's rank and the addresses of the run's nodes.
func (c *Controller) RunSpec(ctx context.Context, id, nodeID, workspaceURL string) (*api.RunSpec, error) {
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	if r.Status.Terminal() {
		return nil, conflictf("run %s already ended: %s", id, r.Status)
	}
	envMax := workspace.DefaultEnvCacheMax
	if v, ok, _ := c.Store.Setting(ctx, workspace.SettingEnvCacheMax); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			envMax = n
		}
	}
	nodes, rank, gpus, err := c.topology(ctx, r, nodeID)
	if err != nil {
		return nil, err
	}
	return &api.RunSpec{
		RunID: r.ID, Spec: r.Spec, WorkspaceURL: workspaceURL, EnvCacheMaxBytes: envMax,
		Nodes: nodes, NodeRank: rank, MasterPort: masterPort(r.ID), GPUs: gpus,
		CancelGraceSeconds: int(c.Settings.CancelGrace / time.Second),
		HeartbeatSeconds:   int(c.Settings.Heartbeat / time.Second),
		Attempt:            max(r.Attempt, 1),
		Token:              c.tokenFor(r),
		Checkpoint:         c.Checkpoints.checkpointRef(ctx, r.ID),
		Replica:            c.replicaConfig(ctx, r),
	}, nil
}

// topology is a run's node addresses in rank order and the rank of nodeID among them (a run not
// on a cluster has one node: this machine as its processes see it).
func (c *Controller) topology(ctx context.Context, r *job.Run, nodeID string) ([]string, int, []string, error) {
	p := r.Placement
	if p == nil || len(p.Nodes) == 0 {
		return []string{"127.0.0.1"}, 0, nil, nil
	}
	rank := p.Rank(nodeID)
	var addrs []string
	for _, id := range p.Nodes {
		addr := "127.0.0.1"
		if n, err := c.Store.Cluster.Node(ctx, id); err == nil && n.Info != nil && n.Info.Address != "" {
			addr = n.Info.Address
		}
		addrs = append(addrs, addr)
	}
	if rank < 0 {
		return nil, 0, nil, conflictf("run %s is not placed on node %q", r.ID, nodeID)
	}
	return addrs, rank, p.NodeGPUs(nodeID), nil
}

// masterPort is a run's rendezvous port: the same on every node, spread over 20000-32767, below
// Linux's ephemeral range (32768-60999), where the local ports of outgoing connections are picked
// and a busy node's connections could hold the port when rank 0 binds it (CI met
// "failed to bind to 0.0.0.0:39874: Address already in use").
func masterPort(runID string) int {
	h := fnv.New32a()
	h.Write([]byte(runID))
	return 20000 + int(h.Sum32()%12768)
}
