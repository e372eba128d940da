package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
)

// AgentReadyLog is the message `hangar agent` logs once it has joined (or re-registered with a
// saved identity): providers starting agents wait for it in the agent's log to know the start
// went well. It is protocol between the agent and whoever starts it, so neither imports the other.
const AgentReadyLog = "agent ready"

// AgentInfo is what an agent offers, sent when it joins and again when it re-registers.
type AgentInfo struct {
	// Capacity is what the agent offers runs: its slice of the machine.
	Capacity resources.Vector `json:"capacity"`
	GPUs     []compute.GPU    `json:"gpus,omitempty"`
	// Node describes the whole machine.
	Node    *compute.NodeInfo `json:"node,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Version string            `json:"version,omitempty"`
}

// JoinRequest is an agent's first call (POST /api/agents/join), made with its join token.
type JoinRequest struct {
	// NodeID, when set, must be the node the token was minted for.
	NodeID string `json:"node_id,omitempty"`
	AgentInfo
	// Runs are supervisors the agent already runs (a restarted agent re-joining).
	Runs []AgentRun `json:"runs,omitempty"`
}

// JoinReply gives the agent its identity and the token for its heartbeats.
type JoinReply struct {
	NodeID     string `json:"node_id"`
	Pool       string `json:"pool"`
	AgentToken string `json:"agent_token"`
}

// AgentRun is a run's supervisor as its agent sees it.
type AgentRun struct {
	RunID string `json:"run_id"`
	PID   int    `json:"pid,omitempty"`
	// Alive is true while the supervisor process exists.
	Alive bool `json:"alive"`
	// Final is the run's result file, once written.
	Final *job.Result `json:"final,omitempty"`
	// Reason says why a supervisor that is not alive left no result (and what the agent ended of
	// what its run left running).
	Reason string `json:"reason,omitempty"`
}

// AgentHeartbeat is an agent's periodic report (POST /api/agents/{id}/heartbeat, agent token).
type AgentHeartbeat struct {
	// Runs are the supervisors the agent runs, and those that ended recently.
	Runs []AgentRun `json:"runs"`
	// Acks are the ids of work the agent acted on; acknowledged work is not sent again.
	Acks []int64 `json:"acks,omitempty"`
	// Register is set on the first heartbeat after the agent started again or found the server
	// back: everything it offers, as when it joined.
	Register *AgentInfo `json:"register,omitempty"`
	// Draining says the agent takes no new runs (it was told to release, or is stopping).
	Draining bool `json:"draining,omitempty"`
	// Leaving is the agent's last heartbeat before it exits.
	Leaving bool `json:"leaving,omitempty"`
	// Notice says the machine got its shutdown notice (the agent was stopped by SIGTERM while
	// running work, as clouds do before they take a spot machine back): the server treats the
	// node as preempted and requeues its runs, which saved their checkpoints first.
	Notice bool `json:"notice,omitempty"`
	// PollMillis lets the server hold the reply up to this long until work arrives for the node
	// (a long poll: work reaches the agent as it is queued); 0 answers at once. Work not yet
	// sent, or a release the agent does not know of, is answered at once either way.
	PollMillis int64 `json:"poll_ms,omitempty"`
	// Activity is what says the node is in use (for a compute instance's idle shutdown), sent
	// every ActivityEvery at most.
	Activity *NodeActivity `json:"activity,omitempty"`
}

// NodeActivity is an agent's report of who uses its node besides Hangar's runs.
type NodeActivity struct {
	// SSHSessions counts sshd's per-session processes ("sshd: user@pts/0") and the sessions
	// open on the agent's own SSH server (SSHReport).
	SSHSessions int `json:"ssh_sessions"`
	// JupyterKernels counts running Jupyter kernels (ipykernel processes).
	JupyterKernels int `json:"jupyter_kernels"`
	// CPUPercent is the whole node's CPU use since the last report (all cores: 100 is all busy).
	CPUPercent float64 `json:"cpu_percent"`
	// GPUPercent is the busiest GPU's use, when HasGPU.
	GPUPercent float64 `json:"gpu_percent,omitempty"`
	HasGPU     bool    `json:"has_gpu,omitempty"`
	// Jupyter is the Jupyter server the agent runs for a compute instance (HeartbeatReply.Jupyter).
	Jupyter *JupyterReport `json:"jupyter,omitempty"`
	// SSH is the SSH server the agent runs for a compute instance (HeartbeatReply.SSH).
	SSH *SSHReport `json:"ssh,omitempty"`
}

// SSHReport is how a compute instance's SSH server, run by its agent, is doing: where the
// workspace server reaches it, and its host key (an authorized_keys line: "ssh-ed25519 AAAA...")
// for clients to pin.
type SSHReport struct {
	State   string `json:"state"` // running, failed
	Reason  string `json:"reason,omitempty"`
	Addr    string `json:"addr,omitempty"` // host:port, reachable from the workspace server
	HostKey string `json:"host_key,omitempty"`
}

// SSH server states an agent reports.
const (
	SSHRunning = "running"
	SSHFailed  = "failed"
)

// JupyterReport is how a compute instance's Jupyter server is doing on its node. Token is the
// server's own: the workspace server adds it when it proxies, and never shows it.
type JupyterReport struct {
	State  string `json:"state"` // starting, running, failed, not installed
	Reason string `json:"reason,omitempty"`
	Addr   string `json:"addr,omitempty"` // host:port, reachable from the workspace server
	Token  string `json:"token,omitempty"`
}

// Jupyter states an agent reports.
const (
	JupyterStarting     = "starting"
	JupyterRunning      = "running"
	JupyterFailed       = "failed"
	JupyterNotInstalled = "not installed"
)

// RunAssignment asks an agent to start a run's supervisor.
type RunAssignment struct {
	ID    int64  `json:"id"`
	RunID string `json:"run_id"`
	// Token is the run's token: the supervisor fetches everything else with it.
	Token string `json:"token"`
}

// RunCancel asks an agent to stop a run (SIGTERM to its supervisor).
type RunCancel struct {
	ID    int64  `json:"id"`
	RunID string `json:"run_id"`
}

// HeartbeatReply carries the agent's work.
type HeartbeatReply struct {
	Assignments []RunAssignment `json:"assignments,omitempty"`
	// Servers, on a workspace served by several servers (design 0020), lists their addresses
	// (comma-separated): the agent and the supervisors it starts move to the next when one
	// cannot be reached.
	Servers string      `json:"servers,omitempty"`
	Cancels []RunCancel `json:"cancels,omitempty"`
	// Release tells the agent to take no more runs and exit once its runs have ended.
	Release bool   `json:"release,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Polled says the server long-polls (it honoured PollMillis): the agent sends its next
	// heartbeat at once, the server holding it until there is work. A server that does not
	// answers at once and leaves it unset, and the agent waits out its interval.
	Polled bool `json:"polled,omitempty"`
	// Forget names ended runs of the agent's report whose end the server has recorded: the agent
	// stops reporting them (it would otherwise report each ended run for its KeepEnded, and a
	// busy node's every heartbeat would carry thousands).
	Forget []string `json:"forget,omitempty"`
	// Jupyter, when set, asks the agent to run a Jupyter server under this base URL (the node
	// is a running compute instance's); unset, to stop the one it runs.
	Jupyter string `json:"jupyter,omitempty"`
	// SSHAuthorizedKeys, when set, asks the agent to run an SSH server that admits these public
	// keys (authorized_keys lines: the running instance's ssh_settings.ssh_key_value, with
	// ssh_public_access_enabled); unset, to stop the one it runs.
	SSHAuthorizedKeys string `json:"ssh_authorized_keys,omitempty"`
}

// InstanceServices is what a running compute instance's agent is asked to run beside its runs.
type InstanceServices struct {
	// Jupyter is the base URL to run Jupyter under ("" none).
	Jupyter string
	// SSHAuthorizedKeys are the keys the agent's SSH server admits ("" no SSH server).
	SSHAuthorizedKeys string
}

// Node is a cluster node as listed and shown.
type Node struct {
	ID            string            `json:"id"`
	Pool          string            `json:"pool"`
	State         string            `json:"state"`
	StateReason   string            `json:"state_reason,omitempty"`
	Size          string            `json:"size,omitempty"`
	LowPriority   bool              `json:"low_priority,omitempty"`
	Capacity      resources.Vector  `json:"capacity"`
	Allocated     resources.Vector  `json:"allocated"`
	GPUs          []compute.GPU     `json:"gpus,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Info          *compute.NodeInfo `json:"info,omitempty"`
	Runs          []AgentRun        `json:"runs,omitempty"`
	ProviderID    string            `json:"provider_id,omitempty"`
	CreatedAt     time.Time         `json:"created_at"`
	JoinDeadline  *time.Time        `json:"join_deadline,omitempty"`
	JoinedAt      *time.Time        `json:"joined_at,omitempty"`
	LastHeartbeat *time.Time        `json:"last_heartbeat,omitempty"`
	IdleSince     *time.Time        `json:"idle_since,omitempty"`
	// Pending is work queued for the node and not yet acknowledged (shown by GetNode only).
	Pending []NodeWork `json:"pending,omitempty"`
}

// NodeWork is one piece of work queued for a node.
type NodeWork struct {
	ID          int64      `json:"id"`
	Kind        string     `json:"kind"` // assign | cancel
	RunID       string     `json:"run_id"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

// NodeEvent is one entry of a cluster's timeline.
type NodeEvent struct {
	Time   time.Time `json:"time"`
	Node   string    `json:"node"`
	From   string    `json:"from,omitempty"`
	To     string    `json:"to"`
	Reason string    `json:"reason,omitempty"`
}

// Join joins a cluster; the client's token is the join token.
func (c *AgentClient) Join(ctx context.Context, req JoinRequest) (*JoinReply, error) {
	return call[JoinReply](ctx, c.client, http.MethodPost, "/api/agents/join", req)
}

// Heartbeat reports an agent's runs and returns its work; the client's token is the agent token.
func (c *AgentClient) Heartbeat(ctx context.Context, nodeID string, hb AgentHeartbeat) (*HeartbeatReply, error) {
	return call[HeartbeatReply](ctx, c.client, http.MethodPost, "/api/agents/"+url.PathEscape(nodeID)+"/heartbeat", hb)
}

// List lists a cluster's nodes.
func (c *NodeClient) List(ctx context.Context, pool string) ([]Node, error) {
	return callValue[[]Node](ctx, c.client, http.MethodGet, "/api/computes/"+url.PathEscape(pool)+"/nodes", nil)
}

// Get shows one node with its pending work.
func (c *NodeClient) Get(ctx context.Context, id string) (*Node, error) {
	return call[Node](ctx, c.client, http.MethodGet, "/api/nodes/"+url.PathEscape(id), nil)
}

// Events returns a cluster's timeline, oldest first; limit keeps the newest entries (0 = all).
func (c *NodeClient) Events(ctx context.Context, pool string, limit int) ([]NodeEvent, error) {
	p := "/api/computes/" + url.PathEscape(pool) + "/node-events?limit=" + strconv.Itoa(limit)
	return callValue[[]NodeEvent](ctx, c.client, http.MethodGet, p, nil)
}

// List lists the workspace's size catalog.
func (c *SizeClient) List(ctx context.Context) ([]sizes.Size, error) {
	return callValue[[]sizes.Size](ctx, c.client, http.MethodGet, "/api/sizes", nil)
}

// Create adds a workspace size.
func (c *SizeClient) Create(ctx context.Context, s sizes.Size) (*sizes.Size, error) {
	return call[sizes.Size](ctx, c.client, http.MethodPost, "/api/sizes", s)
}

// Delete removes a workspace size.
func (c *SizeClient) Delete(ctx context.Context, name string) error {
	return c.client.do(ctx, http.MethodDelete, "/api/sizes/"+url.PathEscape(name), nil, nil)
}
