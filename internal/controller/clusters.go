package controller

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/agent/dispatch"
	"github.com/hangar-ml/hangar/internal/autoscaler"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/sizes"
)

// Clusters is what the controller needs to run managed clusters: the node dispatcher, the size
// catalog, where nodes come from, and the scaling policy.
type Clusters struct {
	Dispatch *dispatch.Dispatcher
	Sizes    func(ctx context.Context) (*sizes.Catalog, error)
	// Provider returns the provider of a cluster's nodes.
	Provider func(s compute.Spec) (provider.Provider, error)
	// JoinURL is the server's address as new nodes reach it.
	JoinURL func() string
	Policy  autoscaler.Policy
	// NodeSilentAfter marks a joined node that stopped heartbeating unusable.
	NodeSilentAfter time.Duration

	mu          sync.Mutex
	backoff     map[string]autoscaler.Backoff
	preemptions map[string]int
	state       map[string]PoolState
	deleting    map[string]bool // nodes whose deletion is in flight
	polled      map[string]time.Time
	wg          sync.WaitGroup // provider calls in flight
}

// PoolState is what the controller last decided for a cluster, for `compute show`.
type PoolState struct {
	Target    int       `json:"target_nodes"`
	Current   int       `json:"current_nodes"`
	Explain   []string  `json:"explain,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	At        time.Time `json:"at"`
	// provisionError is why the last node failed to come up, until a node joins again: the
	// runs waiting for nodes say it.
	provisionError string
}

func (cl *Clusters) init() {
	if cl.backoff == nil {
		cl.backoff = map[string]autoscaler.Backoff{}
		cl.preemptions = map[string]int{}
		cl.state = map[string]PoolState{}
		cl.deleting = map[string]bool{}
		cl.polled = map[string]time.Time{}
	}
	if cl.NodeSilentAfter == 0 {
		cl.NodeSilentAfter = time.Minute
	}
}

// PoolState returns the last scaling decision for a cluster.
func (c *Controller) PoolState(pool string) (PoolState, bool) {
	if c.Clusters == nil {
		return PoolState{}, false
	}
	c.Clusters.mu.Lock()
	defer c.Clusters.mu.Unlock()
	st, ok := c.Clusters.state[pool]
	return st, ok
}

// Wait waits for provider calls in flight (for tests and shutdown).
func (cl *Clusters) Wait() { cl.wg.Wait() }

func (cl *Clusters) recordError(pool, msg string, log *slog.Logger) {
	cl.mu.Lock()
	st := cl.state[pool]
	st.LastError = msg
	cl.state[pool] = st
	cl.mu.Unlock()
	log.Warn("cluster", "pool", pool, "err", msg)
}
