package compute

// NodeState is where a managed cluster's node is in its life: the one set of names the store,
// the scheduler, the autoscaler and the cluster backend share.
type NodeState string

// The node states. Only idle and running nodes receive work.
const (
	NodeProvisioning NodeState = "provisioning"
	NodeIdle         NodeState = "idle"
	NodeRunning      NodeState = "running"
	NodeReleasing    NodeState = "releasing"
	NodePreempted    NodeState = "preempted"
	NodeUnusable     NodeState = "unusable"
	// NodeDeleted only appears in a cluster's timeline: the node's row is gone.
	NodeDeleted NodeState = "deleted"
)

// Ready reports whether a node in this state may receive work.
func (s NodeState) Ready() bool { return s == NodeIdle || s == NodeRunning }
