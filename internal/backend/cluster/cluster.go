package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/agent/dispatch"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// Handle is a cluster run's reference: the nodes it was placed on (the first runs the supervisor).
type Handle struct {
	Run   string   `json:"run"`
	Pool  string   `json:"pool"`
	Nodes []string `json:"nodes"`
	// GPUs are the GPU indexes the run holds on each node (no two runs share one).
	GPUs map[string][]string `json:"gpus,omitempty"`
}

// Backend reads runs' state from their nodes' agents.
type Backend struct {
	Store    *store.Store
	Dispatch *dispatch.Dispatcher
	// Sizes returns the workspace's size catalog.
	Sizes func(ctx context.Context) (*sizes.Catalog, error)
	// SilentAfter is how long a node may go without heartbeats before its runs' state is unknown.
	SilentAfter time.Duration
	Now         func() time.Time
}

// ErrPlacedByScheduler is returned by Submit: cluster runs are not submitted one by one.
var ErrPlacedByScheduler = errors.New("cluster runs are placed by the scheduler, not submitted")

// Submit is not used for clusters (see ErrPlacedByScheduler).
func (b *Backend) Submit(ctx context.Context, l backend.Launch) (backend.Handle, error) {
	return nil, ErrPlacedByScheduler
}

// Status is what the run's node's agent last reported; a node gone silent gives an error (the
// state is unknown), a node gone altogether a run that is not alive.
func (b *Backend) Status(ctx context.Context, hb backend.Handle) (backend.Status, error) {
	var h Handle
	if err := json.Unmarshal(hb, &h); err != nil || len(h.Nodes) == 0 {
		return backend.Status{}, fmt.Errorf("decode cluster handle: %v", err)
	}
	n, err := b.Store.Node(ctx, h.Nodes[0])
	if errors.Is(err, store.ErrNotFound) {
		return backend.Status{Reason: "its node " + h.Nodes[0] + " was removed"}, nil
	}
	if err != nil {
		return backend.Status{}, err
	}
	now := time.Now()
	if b.Now != nil {
		now = b.Now()
	}
	if n.State == store.NodeUnusable || (!n.LastHeartbeat.IsZero() && now.Sub(n.LastHeartbeat) > b.SilentAfter) {
		return backend.Status{}, fmt.Errorf("node %s has not been heard from since %s (%s)", n.ID,
			n.LastHeartbeat.Format(time.RFC3339), n.StateReason)
	}
	for _, r := range n.Runs {
		if r.RunID != h.Run {
			continue
		}
		st := backend.Status{Alive: r.Alive, Reason: r.Reason}
		if r.Final != nil {
			st.Final = &backend.Result{State: r.Final.State, ExitCode: r.Final.ExitCode, Reason: r.Final.Reason, Time: r.Final.Time}
		}
		return st, nil
	}
	// Not reported yet: the assignment is on its way to the agent.
	return backend.Status{Alive: true, Reason: "assigned to node " + n.ID}, nil
}

// Cancel queues a cancel for the run's agent.
func (b *Backend) Cancel(ctx context.Context, hb backend.Handle) error {
	var h Handle
	if err := json.Unmarshal(hb, &h); err != nil || len(h.Nodes) == 0 {
		return fmt.Errorf("decode cluster handle: %v", err)
	}
	for _, n := range h.Nodes {
		if err := b.Dispatch.Cancel(ctx, n, h.Run); err != nil && !errors.Is(err, dispatch.ErrGone) {
			return err
		}
	}
	return nil
}

// Attach checks a cluster definition against the size catalog.
func (b *Backend) Attach(ctx context.Context, s *compute.Spec) (*compute.NodeInfo, error) {
	if s.Cluster == nil {
		return nil, errors.New("not a cluster")
	}
	cat, err := b.Sizes(ctx)
	if err != nil {
		return nil, err
	}
	size, ok := cat.Lookup(s.Cluster.Size)
	if !ok {
		var names []string
		for _, z := range cat.List() {
			names = append(names, z.Name)
		}
		return nil, fmt.Errorf("size: unknown size %q (see hangar compute list-sizes: %v)", s.Cluster.Size, names)
	}
	s.Cluster.Size = size.Name
	return nil, nil
}
