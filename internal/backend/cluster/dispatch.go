package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/pattern"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tick"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// Errors, for the HTTP layer to map with errors.Is.
var (
	ErrUnauthorized = errors.New("unauthorized") // a bad, expired or misdirected token
	ErrGone         = errors.New("gone")         // the node no longer exists or is being released
	ErrInvalid      = errors.New("invalid")      // a malformed request
)

// DefaultJoinTimeout is how long a new node may take to join when NewNode names no timeout.
const DefaultJoinTimeout = 15 * time.Minute

// Runs is what the dispatcher asks of the run core (the controller): a token for a run's current
// attempt, sent with each assignment; and a pass soon (Kick), after an agent's report changed
// what placement decides from: a node joined, came back or left, or a run on it ended.
type Runs interface {
	RunToken(runID string) string
	Kick()
}

// InstanceNodes is what the dispatcher asks of the compute instances' owner (design 0018):
// Activity is given each node activity report an agent sends (instances' idle judgement);
// Services is what a node's agent should run beside its runs, for a running instance's node
// (Jupyter under a base URL, an SSH server).
type InstanceNodes interface {
	Activity(ctx context.Context, n *store.Node, a api.NodeActivity)
	Services(ctx context.Context, n *store.Node) api.InstanceServices
}

// Dispatcher is the agents' side of the clusters: nodes, their tokens, and the work queued for
// them in the store. Its state is in the store, except the long-polling heartbeats it holds:
// one Dispatcher serves a server's agent routes and its cluster backend, so that work queued by
// the backend reaches a waiting agent at once. (Another process may queue work over the same
// store too: the agent then gets it with its next heartbeat.)
type Dispatcher struct {
	Store *store.Store
	// Key signs join and agent tokens: the workspace's run-token key.
	Key []byte
	// Runs is the run core: run tokens, and kicks after reports that change placement.
	Runs Runs
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log may be nil (no logs).
	Log *slog.Logger
	// Instances, when set, is the compute instances' owner (design 0018).
	Instances InstanceNodes

	// wakers let a long-polling heartbeat wait for its node's work: the heartbeat takes its
	// node's channel before it reads the work, and anything that queues work for the node, or
	// changes its state, wakes it.
	wakers tick.Changes[string]
}

func (d *Dispatcher) logger() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}

func (d *Dispatcher) changed() {
	if d.Runs != nil {
		d.Runs.Kick()
	}
}

// NewNode is a node about to be created by a provider.
type NewNode struct {
	Pool        string
	Size        sizes.Size
	LowPriority bool
	Labels      map[string]string
	// JoinTimeout bounds how long the node may take to join (its join token expires then too);
	// 0 means DefaultJoinTimeout.
	JoinTimeout time.Duration
	// Reason is the timeline's first entry for the node (e.g. "scale up: 3 runs waiting").
	Reason string
}

// CreateNode records a provisioning node and returns it with the join token its agent must use.
// Call it before the provider creates the machine, then SetProviderID.
func (d *Dispatcher) CreateNode(ctx context.Context, nn NewNode) (*store.Node, string, error) {
	if nn.JoinTimeout <= 0 {
		nn.JoinTimeout = DefaultJoinTimeout
	}
	now := d.now()
	id := NewNodeID(nn.Pool)
	if !nodeIDRE.MatchString(id) {
		return nil, "", fmt.Errorf("%w: cluster name %q makes an invalid node id", ErrInvalid, nn.Pool)
	}
	n := &store.Node{
		ID: id, Pool: nn.Pool, State: compute.NodeProvisioning, StateReason: "waiting for the agent to join",
		Size: nn.Size.Name, LowPriority: nn.LowPriority, Labels: nn.Labels, CreatedAt: now,
		JoinDeadline: now.Add(nn.JoinTimeout),
	}
	if err := d.Store.Cluster.CreateNode(ctx, n, nn.Reason); err != nil {
		return nil, "", fmt.Errorf("create node in %s: %w", nn.Pool, err)
	}
	return n, tokens.Key(d.Key).MintJoin(n.Pool, n.ID, n.JoinDeadline), nil
}

var nodeIDRE = pattern.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

// NewNodeID returns a fresh node id: the pool's name (cut to 40 characters) and 10 random hex digits.
func NewNodeID(pool string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	if len(pool) > 40 {
		pool = pool[:40]
	}
	return pool + "-" + hex.EncodeToString(b)
}

// SetProviderID records the provider's id of a node's machine (needed to delete it).
func (d *Dispatcher) SetProviderID(ctx context.Context, nodeID, providerID string) error {
	_, err := d.Store.Cluster.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		n.ProviderID = providerID
		return nil, nil
	})
	return err
}

// Assign queues a run for a node's agent: a heartbeat waiting for work returns with it at once
// (else the next one carries it) with the run's token, again until the agent acknowledges it.
// Assigning twice is harmless.
func (d *Dispatcher) Assign(ctx context.Context, nodeID, runID string) error {
	n, err := d.node(ctx, nodeID)
	if err != nil {
		return err
	}
	if n.State == compute.NodeReleasing || n.State == compute.NodePreempted {
		return fmt.Errorf("assign %s to node %s: %w: the node is %s", runID, nodeID, ErrGone, n.State)
	}
	return d.enqueue(ctx, nodeID, runID, store.AssignRun)
}

// Cancel queues a cancel of a run on a node: the agent sends its supervisor SIGTERM, and the
// supervisor still collects outputs and logs and reports Canceled.
func (d *Dispatcher) Cancel(ctx context.Context, nodeID, runID string) error {
	if _, err := d.node(ctx, nodeID); err != nil {
		return err
	}
	return d.enqueue(ctx, nodeID, runID, store.CancelRun)
}

func (d *Dispatcher) enqueue(ctx context.Context, nodeID, runID string, kind store.AssignmentKind) error {
	_, err := d.Store.Cluster.EnqueueAssignment(ctx, store.Assignment{NodeID: nodeID, RunID: runID, Kind: kind, CreatedAt: d.now()})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: node %s does not exist", ErrGone, nodeID)
	}
	if err == nil {
		d.wakers.Changed(nodeID)
	}
	return err
}

// Release marks a node releasing: its agent takes no more runs and exits once its runs ended.
// The cluster then deletes the machine (provider Delete) and the node (Delete).
func (d *Dispatcher) Release(ctx context.Context, nodeID, reason string) error {
	return d.SetState(ctx, nodeID, compute.NodeReleasing, reason)
}

// SetState moves a node to a state with a reason on the timeline (preempted, unusable, ...);
// setting the state it has changes nothing.
func (d *Dispatcher) SetState(ctx context.Context, nodeID string, to compute.NodeState, reason string) error {
	_, err := d.Store.Cluster.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		return transition(n, to, reason, d.now()), nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: node %s does not exist", ErrGone, nodeID)
	}
	d.wakers.Changed(nodeID)
	return err
}

// Delete removes a node (after its machine was deleted) with a reason on the timeline.
func (d *Dispatcher) Delete(ctx context.Context, nodeID, reason string) error {
	err := d.Store.Cluster.DeleteNode(ctx, nodeID, store.NodeEvent{Time: d.now(), Reason: reason})
	d.wakers.Changed(nodeID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err == nil {
		d.changed() // its cluster may replace it, and its waiting runs learn why
	}
	return err
}

func (d *Dispatcher) node(ctx context.Context, id string) (*store.Node, error) {
	n, err := d.Store.Cluster.Node(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: node %s does not exist", ErrGone, id)
	}
	return n, err
}
