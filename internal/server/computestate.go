package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// targetFacts is what a compute target's state (compute list's STATE, compute show's State) is
// decided from: read by describe and stateFacts, decided by targetState alone.
type targetFacts struct {
	Type string
	// HasBackend says whether this server runs targets of the type (for the serverless pool:
	// managed clusters, which its jobs run on).
	HasBackend bool
	// Silent is why the controller's calls found the target silent; Unreachable why the
	// backend could not describe it (compute show).
	Silent, Unreachable string
	// Instance is a compute instance's state (Starting, Running, Stopping, Stopped, Failed).
	Instance string
	// Nodes are a managed cluster's nodes (the serverless pool's: those of all its clusters);
	// MaxNodes its bound (the pool's max_instances), 0 when none is known; ProvisionError why
	// its last node failed to come up, until one joins.
	Nodes          []compute.NodeState
	MaxNodes       int
	ProvisionError string
}

// targetState is a target's state as people read it: an instance's own state (running,
// stopped, ...), a cluster's or the serverless pool's nodes ("2 nodes (up to 4): 1 idle, 1
// busy", "no nodes (up to 4 on demand)"), else ready, or why not (unreachable; unsupported: a
// type this server runs no backend for).
func targetState(f targetFacts) string {
	switch {
	case f.Type == compute.TypeServerless && !f.HasBackend:
		return "unsupported: this server runs no managed clusters, which serverless jobs run on"
	case !f.HasBackend:
		return "unsupported"
	case f.Type == compute.TypeInstance && f.Instance != "":
		return strings.ToLower(f.Instance)
	case f.Silent != "":
		return f.Silent
	case f.Unreachable != "":
		return "unreachable: " + f.Unreachable
	case f.Type == compute.TypeCluster || f.Type == compute.TypeServerless:
		return nodesState(f)
	}
	return "ready"
}

// nodeWords orders a cluster's node states as its state lists them, each with its word.
var nodeWords = []struct {
	state compute.NodeState
	word  string
}{
	{compute.NodeIdle, "idle"}, {compute.NodeRunning, "busy"}, {compute.NodeProvisioning, "provisioning"},
	{compute.NodeReleasing, "releasing"}, {compute.NodePreempted, "preempted"}, {compute.NodeUnusable, "unusable"},
}

func nodesState(f targetFacts) string {
	bound := ""
	if f.MaxNodes > 0 {
		bound = fmt.Sprintf(" (up to %d)", f.MaxNodes)
	}
	var s string
	if len(f.Nodes) == 0 {
		s = "no nodes" + strings.TrimSuffix(bound, ")")
		if bound != "" {
			s += " on demand)"
		}
	} else {
		count := map[compute.NodeState]int{}
		for _, n := range f.Nodes {
			count[n]++
		}
		var parts []string
		for _, w := range nodeWords {
			if count[w.state] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", count[w.state], w.word))
			}
		}
		s = fmt.Sprintf("%d %s%s: %s", len(f.Nodes), plural(len(f.Nodes), "node"), bound, strings.Join(parts, ", "))
	}
	if f.ProvisionError != "" {
		s += "; provisioning failed: " + oneLine(f.ProvisionError)
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// stateFacts reads what a target's state needs beyond its backend: an instance's state, a
// cluster's nodes and provisioning error, the serverless pool's clusters' nodes (a store that
// cannot tell leaves them out).
func (s *computeRoutes) stateFacts(ctx context.Context, t compute.Target, spec *compute.Spec, f *targetFacts) {
	switch t.Type {
	case compute.TypeInstance:
		if row, err := s.cfg.Store.Instances.Get(ctx, t.Name); err == nil {
			f.Instance = row.State
		}
	case compute.TypeCluster:
		if spec != nil && spec.Cluster != nil {
			f.MaxNodes = spec.Cluster.MaxInstances
		}
		s.poolNodes(ctx, f, func(pool string) bool { return pool == t.Name })
	case compute.TypeServerless:
		if spec != nil && spec.Serverless != nil {
			f.MaxNodes = spec.Serverless.MaxInstances
		}
		s.poolNodes(ctx, f, func(pool string) bool { return compute.ServerlessSizeOf(pool) != "" })
	}
}

// poolNodes adds the nodes of the pools that match, and the first provisioning error among them.
func (s *computeRoutes) poolNodes(ctx context.Context, f *targetFacts, match func(pool string) bool) {
	nodes, err := s.cfg.Store.Cluster.Nodes(ctx, store.NodeFilter{})
	if err != nil {
		return
	}
	for _, n := range nodes {
		if match(n.Pool) {
			f.Nodes = append(f.Nodes, n.State)
		}
	}
	ts, err := s.cfg.Store.Cluster.Computes(ctx)
	if err != nil {
		return
	}
	for _, t := range ts {
		if !match(t.Name) {
			continue
		}
		if ps, ok, _ := s.cfg.Store.Cluster.PoolState(ctx, t.Name); ok && ps.ProvisionError != "" && f.ProvisionError == "" {
			f.ProvisionError = ps.ProvisionError
		}
	}
}
