package sim

import (
	"time"

	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/resources"
)

// The sizes of the default clusters: a 16-core CPU node and a 4-GPU node.
var (
	d16  = resources.Vector{MilliCPU: 16 * resources.Core, Memory: 64 * resources.Gi}
	nc24 = resources.Vector{MilliCPU: 24 * resources.Core, Memory: 220 * resources.Gi, GPU: 4}
)

// PoolConfig is one simulated managed cluster.
type PoolConfig struct {
	ID, Family string
	Size       resources.Vector
	Min, Max   int
	Idle       time.Duration // idle_time_before_scale_down
	Tier       autoscaler.Tier
}

// Config is one simulation: the trace, the clusters and the simulated provider.
type Config struct {
	Seed  uint64
	Start time.Time
	Tick  time.Duration
	// Drain is how long the simulation may go on after the trace's last submission for
	// the queue to empty and idle nodes to go.
	Drain time.Duration
	Trace TraceConfig
	Pools []PoolConfig
	// Quotas are the family core quotas (millicores); UserLimit the per-user run limit.
	Quotas    map[string]int64
	UserLimit int
	// Nodes take BootMin..BootMax (uniform) to join; BootFailure of them never do.
	BootMin, BootMax time.Duration
	BootFailure      float64
	// PreemptPerHour is the chance per node-hour that a low_priority node is preempted.
	PreemptPerHour float64
	// CheckpointInterval is how often runs save a checkpoint (HANGAR_CHECKPOINT_DIR); a
	// preempted run resumes from its last save. 0: runs restart from scratch.
	CheckpointInterval time.Duration
	// ReleaseTime is how long a released node takes to go.
	ReleaseTime time.Duration
	Autoscaler  autoscaler.Policy
}

// DefaultConfig is the scenario hangar-sim runs: a CPU cluster of up to 24 dedicated
// 16-core nodes and a low-priority GPU cluster of up to 8 4-GPU nodes, both scaling
// from zero with the default 120 s idle time.
func DefaultConfig(seed uint64) Config {
	return Config{
		Seed: seed, Start: time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC),
		Tick: 5 * time.Second, Drain: 12 * time.Hour, Trace: DefaultTraceConfig(),
		Pools: []PoolConfig{
			{ID: "cpu", Family: "Dv3", Size: d16, Max: 24, Idle: 120 * time.Second, Tier: autoscaler.Dedicated},
			{ID: "gpu", Family: "NCv3", Size: nc24, Max: 8, Idle: 120 * time.Second, Tier: autoscaler.LowPriority},
		},
		Quotas:  map[string]int64{"Dv3": 24 * 16 * resources.Core, "NCv3": 8 * 24 * resources.Core},
		BootMin: 2 * time.Minute, BootMax: 6 * time.Minute, BootFailure: 0.03,
		PreemptPerHour: 0.05, ReleaseTime: 30 * time.Second,
		Autoscaler: autoscaler.Policy{ProvisionTimeout: 10 * time.Minute},
	}
}
