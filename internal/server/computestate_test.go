package server

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/compute"
)

// compute list's STATE says what each kind of target really is: an instance's own state, a
// cluster's and the serverless pool's nodes, an attached target's reachability. Before, a
// stopped instance read ready and a configured serverless pool unsupported.
func TestTargetState(t *testing.T) {
	idle, busy, prov := compute.NodeIdle, compute.NodeRunning, compute.NodeProvisioning
	tests := []struct {
		name string
		f    targetFacts
		want string
	}{
		{"local", targetFacts{Type: compute.TypeLocal, HasBackend: true}, "ready"},
		{"ssh vm", targetFacts{Type: compute.TypeSSH, HasBackend: true}, "ready"},
		{"ssh vm silent", targetFacts{Type: compute.TypeSSH, HasBackend: true, Silent: "unreachable since 10:02:03: ssh: connection refused"},
			"unreachable since 10:02:03: ssh: connection refused"},
		{"slurm not described", targetFacts{Type: compute.TypeSlurm, HasBackend: true, Unreachable: "sinfo: exit status 1"},
			"unreachable: sinfo: exit status 1"},
		{"kubernetes", targetFacts{Type: compute.TypeKubernetes, HasBackend: true}, "ready"},
		{"kubernetes without a backend", targetFacts{Type: compute.TypeKubernetes}, "unsupported"},
		{"instance stopped", targetFacts{Type: compute.TypeInstance, HasBackend: true, Instance: "Stopped"}, "stopped"},
		{"instance starting", targetFacts{Type: compute.TypeInstance, HasBackend: true, Instance: "Starting"}, "starting"},
		{"instance running", targetFacts{Type: compute.TypeInstance, HasBackend: true, Instance: "Running", Nodes: []compute.NodeState{idle}}, "running"},
		{"instance failed", targetFacts{Type: compute.TypeInstance, HasBackend: true, Instance: "Failed"}, "failed"},
		{"cluster scaled to zero", targetFacts{Type: compute.TypeCluster, HasBackend: true, MaxNodes: 5}, "no nodes (up to 5 on demand)"},
		{"cluster busy", targetFacts{Type: compute.TypeCluster, HasBackend: true, MaxNodes: 5, Nodes: []compute.NodeState{busy, idle, busy}},
			"3 nodes (up to 5): 1 idle, 2 busy"},
		{"cluster one node coming", targetFacts{Type: compute.TypeCluster, HasBackend: true, MaxNodes: 1, Nodes: []compute.NodeState{prov}},
			"1 node (up to 1): 1 provisioning"},
		{"cluster failing", targetFacts{Type: compute.TypeCluster, HasBackend: true, MaxNodes: 2,
			ProvisionError: "create hook:\n exit status 3"}, "no nodes (up to 2 on demand); provisioning failed: create hook: exit status 3"},
		{"serverless idle", targetFacts{Type: compute.TypeServerless, HasBackend: true, MaxNodes: 4}, "no nodes (up to 4 on demand)"},
		{"serverless in use", targetFacts{Type: compute.TypeServerless, HasBackend: true, MaxNodes: 4, Nodes: []compute.NodeState{busy}},
			"1 node (up to 4): 1 busy"},
		{"serverless without managed clusters", targetFacts{Type: compute.TypeServerless},
			"unsupported: this server runs no managed clusters, which serverless jobs run on"},
	}
	for _, tt := range tests {
		if got := targetState(tt.f); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
