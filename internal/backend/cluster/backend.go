package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// Pools is what a backend whose pools are not clusters (Kind instance) asks of their owner:
// PoolSpec turns a target of Kind into its pool's spec (a Cluster part); Admit may refuse a job
// on a target that exists but cannot take one now (a stopped instance).
type Pools interface {
	PoolSpec(ctx context.Context, t compute.Target) (compute.Spec, error)
	Admit(ctx context.Context, t compute.Target) error
}

// Requeuer is what the cluster backend asks of the run core (the controller's Requeue): a run
// put back in its queue as a new attempt, when its node was deleted.
type Requeuer interface {
	Requeue(ctx context.Context, runID, reason string) (bool, error)
}

// Backend is the backend of managed clusters (compute type cluster). It places runs (Place, a
// backend.Placer: the scheduler and autoscaler over every cluster), starts a placed run by
// assigning it to its nodes' agents (Submit), reads its state from what the agents report
// (Status), and stops it through them (Cancel).
type Backend struct {
	Store  *store.Store
	Agents *Dispatcher
	// Sizes returns the workspace's size catalog.
	Sizes func(ctx context.Context) (*sizes.Catalog, error)
	// Provider returns the provider of a cluster's nodes.
	Provider func(s compute.Spec) (provider.Provider, error)
	// JoinURL is the server's address as new nodes reach it.
	JoinURL func() string
	// JoinCA is the PEM of an https server's certificate: the only one new nodes' agents trust.
	JoinCA []byte
	Policy autoscaler.Policy
	// SilentAfter is how long a joined node's agent may go unheard: then the node is unusable
	// (no new work) and its runs' state is unknown. Zero means a minute.
	SilentAfter time.Duration
	// Recheck is how soon a pass that changed nothing asks to be called again (backend.Plan.Wake)
	// when nothing else happens: what only time changes (a silent node, an idle node's release, a
	// provisioning deadline or backoff, a provider's preemption poll) is seen that much later at
	// most, while a long queue that cannot move costs a pass per Recheck, not per tick. Zero
	// means 10 s. Joins, reports, run ends and node events call the controller at once anyway.
	Recheck time.Duration
	// Requeuer is the run core, which puts a run back in the queue as a new attempt through the
	// run state machine, for DeleteNode.
	Requeuer Requeuer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	Log *slog.Logger
	// Kind is the compute type whose targets are this backend's pools: "" or cluster, or
	// instance (design 0018: a compute instance is a one-node pool of its own backend value).
	Kind string
	// Pools, when set, turns a target of Kind into its pool's spec and admits jobs on it (the
	// compute instances' owner); nil reads the target's own spec and admits every job.
	Pools Pools

	mu       sync.Mutex
	started  time.Time                   // the first Place: silence is judged only after SilentAfter from it
	state    map[string]*store.PoolState // the clusters' decision state, as last written to the store
	deleting map[string]bool             // nodes whose deletion is in flight
	polled   map[string]time.Time        // when each low-priority cluster's provider was last asked
	wg       sync.WaitGroup              // provider calls in flight
}

// handle is a cluster run's handle: the run's attempt on its nodes, in rank order.
type handle struct {
	Run     string   `json:"run"`
	Pool    string   `json:"pool"`
	Attempt int      `json:"attempt,omitempty"`
	Nodes   []string `json:"nodes"`
	// GPUs is only in handles of servers before placements were run data; it is not read.
	GPUs json.RawMessage `json:"gpus,omitempty"`
}

func decodeHandle(h backend.Handle) (handle, error) {
	var v handle
	if err := backend.DecodeHandle(h, &v); err != nil {
		return v, err
	}
	if v.Run == "" || len(v.Nodes) == 0 {
		return v, fmt.Errorf("%w: %s names no run or no node", backend.ErrBadHandle, h)
	}
	return v, nil
}

// handle decodes a handle and checks that it names one of this workspace's clusters: the nodes
// of a run may be gone (their runs are then not alive), but a handle whose cluster never was,
// or is gone with all it ran, is another workspace's (or made up), not a run that ended.
func (b *Backend) handle(ctx context.Context, hb backend.Handle) (handle, error) {
	h, err := decodeHandle(hb)
	if err != nil {
		return h, err
	}
	t, err := b.Store.Cluster.Compute(ctx, h.Pool)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return h, fmt.Errorf("%w: run %s is on cluster %s, which does not exist", backend.ErrBadHandle, h.Run, h.Pool)
	case err != nil:
		return h, err
	case t.Type != b.kind():
		return h, fmt.Errorf("%w: run %s is on %s, a %s target, not a %s", backend.ErrBadHandle, h.Run, h.Pool, t.Type, b.kind())
	}
	return h, nil
}

func (b *Backend) kind() string {
	if b.Kind != "" {
		return b.Kind
	}
	return compute.TypeCluster
}

// poolSpec is a target's spec as a pool (its Cluster part set), through Pools when set.
func (b *Backend) poolSpec(ctx context.Context, t compute.Target) (compute.Spec, error) {
	if b.Pools != nil {
		return b.Pools.PoolSpec(ctx, t)
	}
	st, err := compute.Load(t)
	if err != nil {
		return compute.Spec{}, err
	}
	if st.Spec.Cluster == nil {
		return st.Spec, fmt.Errorf("compute %s is not a cluster", t.Name)
	}
	return st.Spec, nil
}

func (b *Backend) now() time.Time {
	if b.Now != nil {
		return b.Now().UTC()
	}
	return time.Now().UTC()
}

func (b *Backend) recheck() time.Duration {
	if b.Recheck > 0 {
		return b.Recheck
	}
	return 10 * time.Second
}

func (b *Backend) silentAfter() time.Duration {
	if b.SilentAfter > 0 {
		return b.SilentAfter
	}
	return time.Minute
}

func (b *Backend) log() *slog.Logger {
	if b.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Log
}

// Submit starts a placed run: each of its nodes' agents is assigned the run, and starts a
// supervisor for its share of the ranks (node 0's leads). Assigning again is harmless, so
// Submit may be called again. A run without a placement has not been through Place: an error.
func (b *Backend) Submit(ctx context.Context, l backend.Launch) (backend.Handle, error) {
	if l.Placement == nil || len(l.Placement.Nodes) == 0 {
		return nil, fmt.Errorf("submit %s: cluster runs start where Place put them, and this one has no placement", l.RunID)
	}
	for _, n := range l.Placement.Nodes {
		if err := b.Agents.Assign(ctx, n, l.RunID); err != nil {
			return nil, fmt.Errorf("submit %s: %w", l.RunID, err)
		}
	}
	return json.Marshal(handle{Run: l.RunID, Pool: l.Target.Name, Attempt: l.Attempt, Nodes: l.Placement.Nodes})
}

// Status is what the run's first node's agent last reported; a node gone silent gives an error
// (the state is unknown), a node gone altogether a run that is not alive.
func (b *Backend) Status(ctx context.Context, hb backend.Handle) (backend.Status, error) {
	h, err := b.handle(ctx, hb)
	if err != nil {
		return backend.Status{}, err
	}
	n, err := b.Store.Cluster.Node(ctx, h.Nodes[0])
	if errors.Is(err, store.ErrNotFound) {
		return backend.Status{Reason: "its node " + h.Nodes[0] + " was removed"}, nil
	}
	if err != nil {
		return backend.Status{}, err
	}
	if n.State == compute.NodeUnusable || (!n.LastHeartbeat.IsZero() && b.now().Sub(n.LastHeartbeat) > b.silentAfter()) {
		return backend.Status{}, fmt.Errorf("node %s has not been heard from since %s (%s)", n.ID,
			n.LastHeartbeat.Format(time.RFC3339), n.StateReason)
	}
	pending, err := b.Store.Cluster.Assignments(ctx, n.ID, true)
	if err != nil {
		return backend.Status{}, err
	}
	assigned := time.Time{} // when a start of the run on this node waits for the agent
	for _, a := range pending {
		if a.RunID == h.Run && a.Kind == store.AssignRun {
			assigned = a.CreatedAt
		}
	}
	for _, r := range n.Runs {
		if r.RunID != h.Run {
			continue
		}
		if r.Final != nil && !r.Final.Time.IsZero() && !assigned.IsZero() && assigned.After(r.Final.Time) {
			break // an earlier attempt that ran here (a multi-node run requeued onto a survivor)
		}
		st := backend.Status{Alive: r.Alive, Reason: r.Reason}
		if r.Final != nil {
			st.Final = &job.Result{State: r.Final.State, ExitCode: r.Final.ExitCode, Reason: r.Final.Reason, Time: r.Final.Time}
		}
		return st, nil
	}
	if !assigned.IsZero() {
		return backend.Status{Alive: true, Reason: "assigned to node " + n.ID}, nil // on its way to the agent
	}
	// The agent took the run (an agent reports what it acknowledges) and no longer reports it:
	// it ended long enough ago to be forgotten, or the agent lost its work dir.
	return backend.Status{Reason: fmt.Sprintf("the agent of node %s no longer reports the run", n.ID)}, nil
}

// Cancel queues a cancel for the run on each of its nodes; nodes already gone have nothing left
// to stop.
func (b *Backend) Cancel(ctx context.Context, hb backend.Handle) error {
	h, err := b.handle(ctx, hb)
	if err != nil {
		return err
	}
	for _, n := range h.Nodes {
		if err := b.Agents.Cancel(ctx, n, h.Run); err != nil && !errors.Is(err, ErrGone) {
			return fmt.Errorf("cancel %s on node %s: %w", h.Run, n, err)
		}
	}
	return nil
}

// Attach checks a cluster (or instance) definition against the size catalog.
func (b *Backend) Attach(ctx context.Context, s *compute.Spec) (*compute.NodeInfo, error) {
	var sizeName *string
	switch {
	case s.Cluster != nil:
		sizeName = &s.Cluster.Size
	case s.Instance != nil:
		sizeName = &s.Instance.Size
	default:
		return nil, errors.New("not a cluster")
	}
	cat, err := b.Sizes(ctx)
	if err != nil {
		return nil, err
	}
	size, ok := cat.Lookup(*sizeName)
	if !ok {
		var names []string
		for _, z := range cat.List() {
			names = append(names, z.Name)
		}
		return nil, fmt.Errorf("size: unknown size %q (see hangar compute list-sizes: %v)", *sizeName, names)
	}
	*sizeName = size.Name
	return nil, nil
}

// CheckSpec refuses what a cluster can never run: more nodes than max_instances, or more per
// node than its size has.
func (b *Backend) CheckSpec(ctx context.Context, t compute.Target, sp job.Spec) error {
	if b.Pools != nil {
		if err := b.Pools.Admit(ctx, t); err != nil {
			return err
		}
	}
	ps, err := b.poolSpec(ctx, t)
	if err != nil || ps.Cluster == nil {
		return nil
	}
	cs := ps.Cluster
	if n := sp.Resources.InstanceCount; n > cs.MaxInstances {
		return fmt.Errorf("resources.instance_count: the job needs %d nodes, compute %s has max_instances %d", n, t.Name, cs.MaxInstances)
	}
	cat, err := b.Sizes(ctx)
	if err != nil {
		return err
	}
	size, ok := cat.Lookup(cs.Size)
	if !ok {
		return fmt.Errorf("compute %s: its size %s is not in the catalog", t.Name, cs.Size)
	}
	req, have := request(sp, size), size.Vector()
	switch {
	case req.GPU > have.GPU:
		return fmt.Errorf("resources.properties.gpus: the job needs %d GPUs per node, size %s has %d", req.GPU, size.Name, have.GPU)
	case req.MilliCPU > have.MilliCPU:
		return fmt.Errorf("resources.properties.cores: the job needs %s cores per node, size %s has %d", resources.FormatCPU(req.MilliCPU), size.Name, size.Cores)
	case req.Memory > have.Memory:
		return fmt.Errorf("resources.properties.memory: the job needs %s per node, size %s has %s", resources.FormatMemory(req.Memory), size.Name, resources.FormatMemory(have.Memory))
	}
	return nil
}

// Wait waits for provider calls in flight (for tests and shutdown).
func (b *Backend) Wait() { b.wg.Wait() }
