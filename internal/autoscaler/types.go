package autoscaler

import (
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// Tier is a cluster's VM priority: dedicated nodes stay, low-priority ones may be preempted.
type Tier string

// The tiers, named as in the compute YAML.
const (
	Dedicated   Tier = "dedicated"
	LowPriority Tier = "low_priority"
)

// Defaults for a zero Policy field and a zero IdleTimeBeforeScaleDown.
const (
	DefaultIdleTimeBeforeScaleDown = 120 * time.Second
	DefaultProvisionTimeout        = 15 * time.Minute
	DefaultBackoffBase             = 30 * time.Second
	DefaultBackoffMax              = 15 * time.Minute
	DefaultMaxPreemptionRetries    = 3
	DefaultLostAfter               = 15 * time.Minute
)

// Policy holds the workspace-wide knobs; a zero field takes its default.
type Policy struct {
	// ProvisionTimeout is how long a node without its own deadline (Node.JoinBy) may stay
	// provisioning before it is deleted as never joined, which counts as a provisioning failure.
	ProvisionTimeout time.Duration
	// After n consecutive provisioning failures, no node is created until
	// min(BackoffBase × 2^(n-1), BackoffMax) after the last one.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxPreemptionRetries is how many times a run is requeued after losing its node to
	// preemption before it fails.
	MaxPreemptionRetries int
	// LostAfter is how long an unusable node that went silent (a cut link, a hung machine) is
	// kept before it is deleted: its agent may come back, with its runs, until then.
	LostAfter time.Duration
}

// RunRef is a run on a node, with how many times it was requeued after preemption already.
type RunRef struct {
	ID          string
	Preemptions int
}

// Node is one node of a cluster, as last reported.
type Node struct {
	ID    string
	State compute.NodeState
	// CreatedAt is when provisioning began; JoinedAt when the agent joined (zero before).
	CreatedAt time.Time
	JoinedAt  time.Time
	// JoinBy is when a provisioning node must have joined (the cluster's provision_timeout
	// after its creation, shortened to join_timeout once the provider created its machine);
	// zero means CreatedAt + Policy.ProvisionTimeout.
	JoinBy time.Time
	// IdleSince is when the node last became empty (zero while busy; JoinedAt is used
	// when it is zero for an empty node).
	IdleSince time.Time
	// LastSeen is the agent's last heartbeat; Gone marks an unusable node whose agent said it
	// stopped (deleted at once, where a silent one waits for Policy.LostAfter).
	LastSeen time.Time
	Gone     bool
	Runs     []RunRef
	// Reserved marks a node the scheduler holds for a waiting gang (Plan.Reservations);
	// it is never released.
	Reserved bool
}

// Backoff is a cluster's provisioning failure record, kept by the caller between calls.
type Backoff struct {
	Failures    int
	LastFailure time.Time
}

// Pool is one managed cluster.
type Pool struct {
	ID string
	// Min and Max are min_instances and max_instances; every listed node counts.
	Min, Max                int
	IdleTimeBeforeScaleDown time.Duration
	Tier                    Tier
	Nodes                   []Node
	// Demand is how many nodes beyond those existing or provisioning the queue needs
	// (scheduler PoolDemand.Nodes); DemandRuns how many runs they would start.
	Demand     int
	DemandRuns int
	Backoff    Backoff
}

// Input is what Decide decides from.
type Input struct {
	Now    time.Time
	Policy Policy
	Pools  []Pool
}

// Decision holds one PoolDecision per pool, by pool ID.
type Decision struct {
	Pools []PoolDecision
}

// PoolDecision is what to do with one cluster now.
type PoolDecision struct {
	Pool string
	// Target is the node count once this decision is applied (releasing nodes included
	// until they are gone).
	Target int
	// Create is how many nodes to start provisioning.
	Create int
	// Release lists idle nodes to drain and give back, oldest idle first.
	Release []NodeAction
	// Delete lists nodes to remove at once: preempted, unusable, or never joined.
	Delete []NodeAction
	// Requeue lists runs to put back in the queue because their node was preempted; Fail
	// lists those preempted more often than the policy allows.
	Requeue []RunAction
	Fail    []RunAction
	// Backoff is the failure record to keep for the next call.
	Backoff Backoff
	// Explain has one line per decision, including the ones to keep things as they are.
	Explain []string
}

// NodeAction names a node and why something is done to it.
type NodeAction struct {
	Node   string
	Reason string
	// NotJoined marks a node deleted because its agent did not join in time: the caller may
	// add what the provider knows (a create hook's output, the agent's log) to the reason.
	NotJoined bool
}

// RunAction names a run, the preempted node it ran on, its preemption count after this
// one, and why.
type RunAction struct {
	Run         string
	Node        string
	Preemptions int
	Reason      string
}
