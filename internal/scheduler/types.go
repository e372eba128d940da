package scheduler

import (
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

// Priority is a run's queue priority (queue_settings.priority); higher goes first.
type Priority int

// The priorities, lowest first.
const (
	PriorityLow Priority = iota
	PriorityMedium
	PriorityHigh
)

// ParsePriority reads queue_settings.priority; "" means medium, the Azure ML default.
func ParsePriority(s string) (Priority, error) {
	switch s {
	case "low":
		return PriorityLow, nil
	case "", "medium":
		return PriorityMedium, nil
	case "high":
		return PriorityHigh, nil
	}
	return 0, fmt.Errorf("parse priority %q: want low, medium or high", s)
}

// String returns the priority's YAML name.
func (p Priority) String() string {
	switch p {
	case PriorityLow:
		return "low"
	case PriorityMedium:
		return "medium"
	case PriorityHigh:
		return "high"
	}
	return fmt.Sprintf("priority(%d)", int(p))
}

// Pool is a managed cluster: its nodes share one size.
type Pool struct {
	ID string
	// MaxNodes is max_instances; every listed node of the pool, whatever its state, counts.
	MaxNodes int
	// Size is the capacity of one node of the pool's size, what a new node brings.
	Size resources.Vector
	// Labels are the labels every new node of the pool will carry (used to judge whether
	// scaling up can satisfy a run's NodeSelector).
	Labels map[string]string
	// SizeName names the pool's size in reasons ("size X is isolated").
	SizeName string
}

// Node is one node of a pool, as last reported.
type Node struct {
	ID    string
	Pool  string
	State compute.NodeState
	// Capacity is what the node offers; Allocated is what runs on it already hold.
	// A provisioning node with a zero Capacity is assumed to bring its pool's Size.
	Capacity  resources.Vector
	Allocated resources.Vector
	Labels    map[string]string
}

// Run is a queued run asking for InstanceCount nodes of one pool, all or none.
type Run struct {
	ID         string
	Pool       string
	User       string
	Priority   Priority
	SubmitTime time.Time
	// InstanceCount is resources.instance_count; values below 1 mean 1.
	InstanceCount int
	// PerNode is what the run takes on each of its nodes; less than a node's capacity
	// lets several runs share it.
	PerNode resources.Vector
	// NodeSelector lists labels a node must carry (all of them) to take the run.
	NodeSelector map[string]string
	// Family is the size family the run's cores count against; QuotaCPU is how many
	// millicores it counts (0 means InstanceCount × PerNode.MilliCPU).
	Family   string
	QuotaCPU int64
	// Isolated marks a run of an isolated size: it starts only on nodes that run nothing
	// else, and nothing else starts on its nodes while it runs.
	Isolated bool
}

// Running is a run already placed, counted against its user's limit and its family's quota.
type Running struct {
	ID     string
	User   string
	Family string
	Nodes  []string
	// PerNode, QuotaCPU and Isolated mean what they mean on Run. A node listed by a
	// Running counts as busy even when its Allocated is zero.
	PerNode  resources.Vector
	QuotaCPU int64
	Isolated bool
}

// Input is the snapshot the scheduler decides from. IDs are unique within each list.
type Input struct {
	// Now is the snapshot's time; it is echoed in Plan.At (the rules themselves use
	// SubmitTime only, for ordering).
	Now     time.Time
	Pools   []Pool
	Nodes   []Node
	Queue   []Run
	Running []Running
	// Quotas maps a size family to the most millicores its runs may hold at once; a
	// family not listed is unlimited.
	Quotas map[string]int64
	// UserLimits maps a user to the most runs they may have running at once;
	// DefaultUserLimit applies to users not listed. 0 means unlimited.
	UserLimits       map[string]int
	DefaultUserLimit int
}

// Plan is what Schedule decided.
type Plan struct {
	At time.Time
	// Placements and Waiting are in queue order (priority, submit time, ID); together
	// they hold every queued run exactly once.
	Placements []Placement
	Waiting    []Wait
	// Reservations lists the ready nodes held back for a blocked run, by pool.
	Reservations []Reservation
	// Demand has one entry per pool, by pool ID, for the autoscaler.
	Demand []PoolDemand
}

// Placement starts a run on distinct nodes, taking PerNode on each.
type Placement struct {
	Run     string
	Pool    string
	Nodes   []string // sorted
	PerNode resources.Vector
}

// Cause classifies why a run waits.
type Cause string

// The causes of waiting.
const (
	CauseCapacity   Cause = "capacity"   // not enough free nodes; the run holds a reservation
	CauseBehind     Cause = "behind"     // an earlier run in the same pool or family goes first
	CauseQuota      Cause = "quota"      // its family's core quota is used up
	CauseUserLimit  Cause = "user-limit" // its user has as many runs as allowed
	CauseImpossible Cause = "impossible" // can never start as configured (Unschedulable)
)

// Wait says why a queued run did not start.
type Wait struct {
	Run    string
	Pool   string
	Cause  Cause
	Reason string
	// Unschedulable marks a run that cannot start whatever frees up; the server should
	// refuse or fail it.
	Unschedulable bool
}

// Reservation is the set of ready nodes kept free of other work for a blocked run.
type Reservation struct {
	Run   string
	Pool  string
	Nodes []string // sorted
}

// PoolDemand is what the waiting runs of a pool need from the autoscaler.
type PoolDemand struct {
	Pool string
	// Nodes is how many nodes beyond those existing or provisioning would let more
	// waiting runs start, counting each gang whole and staying within MaxNodes.
	Nodes int
	// Runs is how many waiting runs those Nodes would start.
	Runs int
	// AtMax is how many runs would still wait with the pool at MaxNodes (for running
	// work to end).
	AtMax int
}
