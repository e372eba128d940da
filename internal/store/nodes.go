package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
)

// Node is one node of a managed cluster: a machine a provider creates, on which a `hangar agent`
// joins. Zero times are unset.
type Node struct {
	ID          string
	Pool        string // the cluster's name
	State       compute.NodeState
	StateReason string
	Size        string
	LowPriority bool
	// Capacity is what the agent reported it offers; Allocated what the controller placed on it.
	Capacity  resources.Vector
	Allocated resources.Vector
	GPUs      []compute.GPU
	Labels    map[string]string
	Info      *compute.NodeInfo
	// Runs is what the agent last reported.
	Runs          []NodeRun
	ProviderID    string
	JoinDeadline  time.Time
	CreatedAt     time.Time
	JoinedAt      time.Time
	LastHeartbeat time.Time
	IdleSince     time.Time
}

// NodeRun is a run's supervisor as its agent last saw it.
type NodeRun struct {
	RunID string `json:"run_id"`
	PID   int    `json:"pid,omitempty"`
	Alive bool   `json:"alive"`
	// Final is the run's result file, once written.
	Final *job.Result `json:"final,omitempty"`
	// Reason says why a supervisor that is gone left no result.
	Reason string `json:"reason,omitempty"`
}

// NodeEvent is one entry of a cluster's timeline.
type NodeEvent struct {
	Seq    int64
	Pool   string
	NodeID string
	Time   time.Time
	From   compute.NodeState
	To     compute.NodeState
	Reason string
}

const nodeColumns = `id, pool, state, state_reason, size, low_priority, capacity, allocated, gpus, labels,
	info, runs, provider_id, join_deadline, created_at, joined_at, last_heartbeat, idle_since`

// CreateNode inserts a node with its first event (from "" to its state); an existing id is ErrExists.
func (s *Cluster) CreateNode(ctx context.Context, n *Node, reason string) error {
	doing := "create node " + n.ID
	return s.withTx(ctx, doing, func(tx *sql.Tx) error {
		args, err := nodeArgs(n)
		if err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		q := `INSERT INTO nodes (` + nodeColumns + `) VALUES (?` + strings.Repeat(", ?", len(args)-1) + `)`
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			if isUniqueViolation(err) {
				return fmt.Errorf("node %s: %w", n.ID, ErrExists)
			}
			return fmt.Errorf("%s: %w", doing, err)
		}
		ev := NodeEvent{Time: n.CreatedAt, To: n.State, Reason: reason}
		if err := appendNodeEvents(ctx, tx, n, []NodeEvent{ev}); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		return nil
	})
}

// Node returns one node.
func (s *Cluster) Node(ctx context.Context, id string) (*Node, error) {
	return getNode(ctx, s.db, id)
}

func getNode(ctx context.Context, q querier, id string) (*Node, error) {
	return getOne(q.QueryRowContext(ctx, `SELECT `+nodeColumns+` FROM nodes WHERE id = ?`, id), scanNode, "node", id)
}

// NodeFilter selects nodes for Nodes.
type NodeFilter struct {
	Pool   string              // "" = every pool
	States []compute.NodeState // empty = every state
}

// Nodes lists nodes, oldest first (ties by id).
func (s *Cluster) Nodes(ctx context.Context, f NodeFilter) ([]*Node, error) {
	q := `SELECT ` + nodeColumns + ` FROM nodes WHERE 1 = 1`
	var args []any
	if f.Pool != "" {
		q += ` AND pool = ?`
		args = append(args, f.Pool)
	}
	if len(f.States) > 0 {
		q += ` AND state IN (?` + strings.Repeat(", ?", len(f.States)-1) + `)`
		for _, st := range f.States {
			args = append(args, string(st))
		}
	}
	out, err := queryAll(ctx, s.db, scanNode, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return out, nil
}

// UpdateNode reads a node, lets fn change it and return the events to record (their pool and
// node are filled in), and writes both in one transaction. When fn returns an error nothing is
// written and the error is returned as is.
func (s *Cluster) UpdateNode(ctx context.Context, id string, fn func(n *Node) ([]NodeEvent, error)) (*Node, error) {
	doing := "update node " + id
	var n *Node
	err := s.withTx(ctx, doing, func(tx *sql.Tx) (err error) {
		if n, err = getNode(ctx, tx, id); err != nil {
			return err
		}
		events, err := fn(n)
		if err != nil {
			return err
		}
		n.ID = id
		if err := writeNode(ctx, tx, n, events); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// writeNode writes n's row (all but its id) and events.
func writeNode(ctx context.Context, tx *sql.Tx, n *Node, events []NodeEvent) error {
	args, err := nodeArgs(n)
	if err != nil {
		return err
	}
	sets := strings.Split(strings.ReplaceAll(nodeColumns, "\n", ""), ",")
	for i := range sets {
		sets[i] = strings.TrimSpace(sets[i]) + " = ?"
	}
	q := `UPDATE nodes SET ` + strings.Join(sets[1:], ", ") + ` WHERE id = ?`
	if _, err := tx.ExecContext(ctx, q, append(args[1:], n.ID)...); err != nil {
		return err
	}
	return appendNodeEvents(ctx, tx, n, events)
}

// DeleteNode removes a node and its queued work, and records ev (to compute.NodeDeleted) in its pool's timeline.
func (s *Cluster) DeleteNode(ctx context.Context, id string, ev NodeEvent) error {
	doing := "delete node " + id
	return s.withTx(ctx, doing, func(tx *sql.Tx) error {
		n, err := getNode(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE id = ?`, id); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		if ev.From == "" {
			ev.From = n.State
		}
		if ev.To == "" {
			ev.To = compute.NodeDeleted
		}
		if err := appendNodeEvents(ctx, tx, n, []NodeEvent{ev}); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
		return nil
	})
}

// NodeEventFilter selects timeline entries.
type NodeEventFilter struct {
	Pool   string // "" = every pool
	NodeID string // "" = every node
	// Limit keeps only the newest Limit entries (0 = all); the result is oldest first either way.
	Limit int
}

// NodeEvents returns timeline entries, oldest first.
func (s *Cluster) NodeEvents(ctx context.Context, f NodeEventFilter) ([]NodeEvent, error) {
	q := `SELECT seq, pool, node_id, time, from_state, to_state, reason FROM node_events WHERE 1 = 1`
	var args []any
	if f.Pool != "" {
		q += ` AND pool = ?`
		args = append(args, f.Pool)
	}
	if f.NodeID != "" {
		q += ` AND node_id = ?`
		args = append(args, f.NodeID)
	}
	q += ` ORDER BY seq DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	out, err := queryAll(ctx, s.db, scanNodeEvent, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read node events: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

func scanNodeEvent(sc scanner) (e NodeEvent, err error) {
	var t int64
	var from, to string
	err = sc.Scan(&e.Seq, &e.Pool, &e.NodeID, &t, &from, &to, &e.Reason)
	e.Time, e.From, e.To = fromNanos(t), compute.NodeState(from), compute.NodeState(to)
	return e, err
}

func appendNodeEvents(ctx context.Context, tx *sql.Tx, n *Node, events []NodeEvent) error {
	for _, e := range events {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO node_events (pool, node_id, time, from_state, to_state, reason) VALUES (?, ?, ?, ?, ?, ?)`,
			n.Pool, n.ID, nanos(e.Time), string(e.From), string(e.To), e.Reason); err != nil {
			return err
		}
	}
	return nil
}

func nodeArgs(n *Node) ([]any, error) {
	var js [6]string
	for i, v := range []any{n.Capacity, n.Allocated, nonNilGPUs(n.GPUs), nonNilMap(n.Labels), n.Info, nonNilRuns(n.Runs)} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		js[i] = string(b)
	}
	return []any{n.ID, n.Pool, string(n.State), n.StateReason, n.Size, n.LowPriority, js[0], js[1], js[2], js[3],
		js[4], js[5], n.ProviderID, optZero(n.JoinDeadline), nanos(n.CreatedAt), optZero(n.JoinedAt),
		optZero(n.LastHeartbeat), optZero(n.IdleSince)}, nil
}

func scanNode(sc scanner) (*Node, error) {
	var n Node
	var state, capacity, allocated, gpus, labels, info, runs string
	var created int64
	var deadline, joined, hb, idle sql.NullInt64
	if err := sc.Scan(&n.ID, &n.Pool, &state, &n.StateReason, &n.Size, &n.LowPriority, &capacity, &allocated,
		&gpus, &labels, &info, &runs, &n.ProviderID, &deadline, &created, &joined, &hb, &idle); err != nil {
		return nil, err
	}
	n.State, n.CreatedAt = compute.NodeState(state), fromNanos(created)
	n.JoinDeadline, n.JoinedAt, n.LastHeartbeat, n.IdleSince = zeroTime(deadline), zeroTime(joined), zeroTime(hb), zeroTime(idle)
	for _, f := range []struct {
		src string
		dst any
	}{{capacity, &n.Capacity}, {allocated, &n.Allocated}, {gpus, &n.GPUs}, {labels, &n.Labels}, {info, &n.Info}, {runs, &n.Runs}} {
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return nil, fmt.Errorf("decode node %s: %w", n.ID, err)
		}
	}
	if len(n.GPUs) == 0 {
		n.GPUs = nil
	}
	if len(n.Labels) == 0 {
		n.Labels = nil
	}
	if len(n.Runs) == 0 {
		n.Runs = nil
	}
	return &n, nil
}

func optZero(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return nanos(t)
}

func zeroTime(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

func nonNilGPUs(g []compute.GPU) []compute.GPU {
	if g == nil {
		return []compute.GPU{}
	}
	return g
}

func nonNilRuns(r []NodeRun) []NodeRun {
	if r == nil {
		return []NodeRun{}
	}
	return r
}

// AssignmentKind is what a queued piece of node work asks.
type AssignmentKind string

// The kinds of node work.
const (
	AssignRun AssignmentKind = "assign" // start the run's supervisor
	CancelRun AssignmentKind = "cancel" // stop it (SIGTERM; it still collects outputs and logs)
)

// Assignment is work queued for a node's agent, delivered with heartbeat replies until the
// agent acknowledges it. Zero times are unset.
type Assignment struct {
	ID          int64
	NodeID      string
	RunID       string
	Kind        AssignmentKind
	CreatedAt   time.Time
	DeliveredAt time.Time
	AckedAt     time.Time
}

// EnqueueAssignment queues work for a node and returns its id. Queuing the same node, run and
// kind again returns the existing id and changes nothing. A missing node is ErrNotFound.
func (s *Cluster) EnqueueAssignment(ctx context.Context, a Assignment) (int64, error) {
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO node_assignments (node_id, run_id, kind, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (node_id, run_id, kind) DO UPDATE SET created_at = excluded.created_at,
			delivered_at = NULL, acked_at = NULL
		WHERE node_assignments.acked_at IS NOT NULL`,
		a.NodeID, a.RunID, string(a.Kind), nanos(a.CreatedAt))
	if err != nil {
		if isForeignKeyViolation(err) {
			return 0, fmt.Errorf("node %s: %w", a.NodeID, ErrNotFound)
		}
		return 0, fmt.Errorf("queue %s of %s on %s: %w", a.Kind, a.RunID, a.NodeID, err)
	}
	var id int64
	err = s.db.QueryRowContext(ctx, `SELECT id FROM node_assignments WHERE node_id = ? AND run_id = ? AND kind = ?`,
		a.NodeID, a.RunID, string(a.Kind)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("queue %s of %s on %s: %w", a.Kind, a.RunID, a.NodeID, err)
	}
	return id, nil
}

// Assignments lists a node's work in queue order; pendingOnly keeps what is not acknowledged.
func (s *Cluster) Assignments(ctx context.Context, nodeID string, pendingOnly bool) ([]Assignment, error) {
	q := `SELECT id, node_id, run_id, kind, created_at, delivered_at, acked_at FROM node_assignments WHERE node_id = ?`
	if pendingOnly {
		q += ` AND acked_at IS NULL`
	}
	out, err := queryAll(ctx, s.db, scanAssignment, q+` ORDER BY id`, nodeID)
	if err != nil {
		return nil, fmt.Errorf("read work of %s: %w", nodeID, err)
	}
	return out, nil
}

func scanAssignment(sc scanner) (a Assignment, err error) {
	var kind string
	var created int64
	var delivered, acked sql.NullInt64
	err = sc.Scan(&a.ID, &a.NodeID, &a.RunID, &kind, &created, &delivered, &acked)
	a.Kind, a.CreatedAt, a.DeliveredAt, a.AckedAt = AssignmentKind(kind), fromNanos(created), zeroTime(delivered), zeroTime(acked)
	return a, err
}

// MarkDelivered records when work was first sent to a node's agent.
func (s *Cluster) MarkDelivered(ctx context.Context, nodeID string, ids []int64, at time.Time) error {
	return s.stampAssignments(ctx, "delivered_at", nodeID, ids, at)
}

// AckAssignments records that a node's agent acted on work; it is not sent again. Ids of other
// nodes are ignored.
func (s *Cluster) AckAssignments(ctx context.Context, nodeID string, ids []int64, at time.Time) error {
	return s.stampAssignments(ctx, "acked_at", nodeID, ids, at)
}

func (s *Cluster) stampAssignments(ctx context.Context, column, nodeID string, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	q := `UPDATE node_assignments SET ` + column + ` = ? WHERE node_id = ? AND ` + column +
		` IS NULL AND id IN (?` + strings.Repeat(", ?", len(ids)-1) + `)`
	args := []any{nanos(at), nodeID}
	for _, id := range ids {
		args = append(args, id)
	}
	return execStmt(ctx, s.db, fmt.Sprintf("mark work of %s %s", nodeID, strings.TrimSuffix(column, "_at")), q, args...)
}
