package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/hangar-ml/hangar/internal/agent"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
)

// Errors, for the HTTP layer to map with errors.Is.
var (
	ErrUnauthorized = errors.New("unauthorized") // a bad, expired or misdirected token
	ErrGone         = errors.New("gone")         // the node no longer exists or is being released
	ErrInvalid      = errors.New("invalid")      // a malformed request
)

// DefaultJoinTimeout is how long a new node may take to join when NewNode names no timeout.
const DefaultJoinTimeout = 15 * time.Minute

// Dispatcher keeps no state of its own: the server and the controller may each make one over
// the same store and key.
type Dispatcher struct {
	Store *store.Store
	// Key signs join and agent tokens: the workspace's run-token key (controller.Tokens.Key).
	Key []byte
	// RunToken returns a token for a run's current attempt (controller.Controller.RunToken), sent
	// with each assignment.
	RunToken func(runID string) string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log may be nil (no logs).
	Log *slog.Logger
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
		ID: id, Pool: nn.Pool, State: store.NodeProvisioning, StateReason: "waiting for the agent to join",
		Size: nn.Size.Name, LowPriority: nn.LowPriority, Labels: nn.Labels, CreatedAt: now,
		JoinDeadline: now.Add(nn.JoinTimeout),
	}
	if err := d.Store.CreateNode(ctx, n, nn.Reason); err != nil {
		return nil, "", fmt.Errorf("create node in %s: %w", nn.Pool, err)
	}
	return n, agent.MintJoinToken(d.Key, n.Pool, n.ID, n.JoinDeadline), nil
}

var nodeIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

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
	_, err := d.Store.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		n.ProviderID = providerID
		return nil, nil
	})
	return err
}

// Assign queues a run for a node's agent: the next heartbeat reply carries it with the run's
// token, again until the agent acknowledges it. Assigning twice is harmless.
func (d *Dispatcher) Assign(ctx context.Context, nodeID, runID string) error {
	n, err := d.node(ctx, nodeID)
	if err != nil {
		return err
	}
	if n.State == store.NodeReleasing || n.State == store.NodePreempted {
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
	_, err := d.Store.EnqueueAssignment(ctx, store.Assignment{NodeID: nodeID, RunID: runID, Kind: kind, CreatedAt: d.now()})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: node %s does not exist", ErrGone, nodeID)
	}
	return err
}

// Release marks a node releasing: its agent takes no more runs and exits once its runs ended.
// The controller deletes the machine (provider Delete) and then the node (Delete).
func (d *Dispatcher) Release(ctx context.Context, nodeID, reason string) error {
	return d.SetState(ctx, nodeID, store.NodeReleasing, reason)
}

// SetState moves a node to a state with a reason on the timeline (preempted, unusable, ...);
// setting the state it has changes nothing.
func (d *Dispatcher) SetState(ctx context.Context, nodeID string, to store.NodeState, reason string) error {
	_, err := d.Store.UpdateNode(ctx, nodeID, func(n *store.Node) ([]store.NodeEvent, error) {
		return transition(n, to, reason, d.now()), nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: node %s does not exist", ErrGone, nodeID)
	}
	return err
}

// Delete removes a node (after its machine was deleted) with a reason on the timeline.
func (d *Dispatcher) Delete(ctx context.Context, nodeID, reason string) error {
	err := d.Store.DeleteNode(ctx, nodeID, store.NodeEvent{Time: d.now(), Reason: reason})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

func (d *Dispatcher) node(ctx context.Context, id string) (*store.Node, error) {
	n, err := d.Store.Node(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: node %s does not exist", ErrGone, id)
	}
	return n, err
}
