package api

import (
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// Version is the API version served under /api.
const Version = "v1"

// Health is GET /api/health. Workspace and PID are only told to a caller with a user's token
// (the local CLI checks that the server is its workspace's); a load balancer gets the rest.
type Health struct {
	OK        bool   `json:"ok"`
	Version   string `json:"version"`
	Workspace string `json:"workspace,omitempty"`
	PID       int    `json:"pid,omitempty"`
	// Role is "leader" or "follower" for a server of a replicated workspace (design 0020), and
	// Leader the leading server's address; both empty for a workspace served by one server.
	Role   string `json:"role,omitempty"`
	Leader string `json:"leader,omitempty"`
}

// Compute is a compute target as listed and shown.
type Compute struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Description string            `json:"description,omitempty"`
	State       string            `json:"state"`
	Default     bool              `json:"default"`
	CreatedAt   time.Time         `json:"created_at"`
	Node        *compute.NodeInfo `json:"node,omitempty"`
	// Spec is the target's definition, with passwords and keys shown as ***.
	Spec       *compute.Spec  `json:"spec,omitempty"`
	AttachedAt *time.Time     `json:"attached_at,omitempty"`
	Properties map[string]any `json:"properties,omitempty"`
	ActiveRuns int            `json:"active_runs"`
	// ServerlessPool is set on the serverless pool's entry: configured or this machine's.
	ServerlessPool *ServerlessPool `json:"serverless_pool,omitempty"`
}

// MissingRequest asks which blobs the server lacks.
type MissingRequest struct {
	Hashes []string `json:"hashes"`
}

// MissingResponse lists the blobs to upload.
type MissingResponse struct {
	Missing []string `json:"missing"`
}

// BundleResponse reports a bundle upload.
type BundleResponse struct {
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
}

// CreateJobRequest submits a job whose code and local inputs were uploaded already.
type CreateJobRequest struct {
	Spec job.Spec `json:"spec"`
	// Warnings found while parsing on the client, kept on the run.
	Warnings []string `json:"warnings,omitempty"`
}

// RunDetail is a run with its events and last metric values (job show).
type RunDetail struct {
	job.Run
	Events  []job.Event        `json:"events"`
	Metrics map[string]float64 `json:"metrics"`
	// Error is a one-line reason when the run failed; LogTail the last lines of its log.
	Error   string   `json:"error,omitempty"`
	LogTail []string `json:"log_tail,omitempty"`
	// Phases maps a phase name to its duration in seconds (queued, preparing, running, finalizing).
	Phases       map[string]float64 `json:"phases,omitempty"`
	Outputs      []string           `json:"named_outputs,omitempty"`
	HasArtifacts bool               `json:"has_artifacts"`
	// BoundCommand is the command as it ran: inputs and outputs replaced by their values and
	// the node's paths (reported by the supervisor when the run starts; "" before).
	BoundCommand string `json:"bound_command,omitempty"`
	// Params and Tags are what MLflow clients logged to the run (docs/mlflow.md); Tags holds the
	// job's spec tags too (copied when the run was created) and replaces job.Run's in JSON.
	Params map[string]string `json:"params,omitempty"`
	Tags   map[string]string `json:"tags,omitempty"`
	// Archived runs are left out of job list unless asked for (job archive / job restore).
	Archived bool `json:"archived,omitempty"`
	// Sweep is a sweep's trials and best trial; TrialOf says which sweep a trial belongs to.
	// Properties holds Azure's best_child_run_id for a sweep.
	Sweep      *SweepDetail      `json:"sweep,omitempty"`
	TrialOf    *TrialOf          `json:"trial_of,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	// Pipeline is a pipeline's steps; PipelineOf says which pipeline a step's run belongs to.
	Pipeline   *PipelineDetail `json:"pipeline,omitempty"`
	PipelineOf *PipelineOf     `json:"pipeline_of,omitempty"`
	// Serverless is what the serverless pool created for the job (nil for other targets).
	Serverless *ServerlessUse `json:"serverless,omitempty"`
	// Checkpoint is the run's latest saved checkpoint; Preemptions what each preemption cost.
	Checkpoint  *CheckpointRef `json:"checkpoint,omitempty"`
	Preemptions []Preemption   `json:"preemptions,omitempty"`
	// CreationContext and Services are Azure's: who created the job and when, and where it is
	// seen (the studio's page, the MLflow tracking URI); see jobcontext.go.
	CreationContext *CreationContext      `json:"creation_context,omitempty"`
	Services        map[string]JobService `json:"services,omitempty"`
	// LoggedModels are the MLflow 3 logged models the run produced (without their files).
	LoggedModels []LoggedModel `json:"logged_models,omitempty"`
	// Data are the run's inputs and outputs in object stores: where, and what its node moved.
	Data []RunData `json:"data,omitempty"`
}

// LogsResponse is a page of log lines (GET /api/jobs/{name}/logs?after=N&wait=S).
type LogsResponse struct {
	Lines  []job.LogLine `json:"lines"`
	Next   int64         `json:"next"` // pass as after= to continue
	Status job.State     `json:"status"`
	// Done is true when the run is terminal and every line was returned.
	Done bool `json:"done"`
}

// MetricsResponse is a run's metric history.
type MetricsResponse struct {
	Metrics []job.Metric `json:"metrics"`
}

// ArtifactsResponse names the manifests of a finished run's artifacts.
type ArtifactsResponse struct {
	Artifacts    string            `json:"artifacts,omitempty"`
	NamedOutputs map[string]string `json:"named_outputs,omitempty"`
	// Uploaded are the files logged through the MLflow API (mlflow.log_artifact), which
	// `job download` puts beside the job's own under artifacts/.
	Uploaded []UploadedArtifact `json:"uploaded,omitempty"`
	// Withheld are the paths of files logged through the MLflow API that are not in Uploaded:
	// the job's own files hold them (the job's win), or they lie in a folder of the logs Hangar
	// collects (CollectedLogDirs). `job download` says so; it never lays one over the job's.
	Withheld []string `json:"withheld,omitempty"`
	// LoggedModels are the run's MLflow 3 logged models with their files, which `job download`
	// puts under artifacts/models/<model_id>/.
	LoggedModels []LoggedModel `json:"logged_models,omitempty"`
}

// LoggedModel is one of a run's MLflow 3 logged models (mlflow.<flavor>.log_model): its id,
// name and status, how many files it has and their size, and (in ArtifactsResponse) the files.
type LoggedModel struct {
	ID     string             `json:"model_id"`
	Name   string             `json:"name"`
	Status string             `json:"status"`
	Count  int                `json:"file_count"`
	Size   int64              `json:"size"`
	Files  []UploadedArtifact `json:"files,omitempty"`
}

// UploadedArtifact is one file logged through the MLflow artifacts API.
type UploadedArtifact struct {
	Path string `json:"path"`
	Hash string `json:"hash"`
	Size int64  `json:"size"`
}

// RunSpec is what a supervisor needs to execute a run (GET /api/runs/{id}/spec).
type RunSpec struct {
	RunID        string   `json:"run_id"`
	Spec         job.Spec `json:"spec"`
	WorkspaceURL string   `json:"workspace_url"`
	// CancelGraceSeconds is how long the user's processes get between SIGTERM and SIGKILL.
	CancelGraceSeconds int `json:"cancel_grace_seconds"`
	// HeartbeatSeconds is how often the supervisor reports.
	HeartbeatSeconds int `json:"heartbeat_seconds"`
	// Attempt is the run's execution number; the supervisor sends it with every call, and calls
	// from an older attempt are refused.
	Attempt int `json:"attempt"`
	// Nodes are the addresses of the run's nodes in rank order; NodeRank is this supervisor's
	// node (0 leads: it reports the run's phases and collects its outputs); MasterPort is the
	// rendezvous port on node 0.
	Nodes      []string `json:"nodes,omitempty"`
	NodeRank   int      `json:"node_rank"`
	MasterPort int      `json:"master_port,omitempty"`
	// GPUs, when not nil, are the GPUs of this node the run holds (else it sees the node's).
	GPUs []string `json:"gpus"`
	// EnvCacheMaxBytes bounds the node's environment cache (0 = no limit).
	EnvCacheMaxBytes int64 `json:"env_cache_max_bytes,omitempty"`
	// Token is a fresh run token for the supervisor to use from now on (run tokens expire; the
	// supervisor's first one may have waited in a queue).
	Token string `json:"token,omitempty"`
	// Checkpoint is the run's latest saved checkpoint, restored into HANGAR_CHECKPOINT_DIR
	// before the command starts (nil: none yet).
	Checkpoint *CheckpointRef `json:"checkpoint,omitempty"`
	// Servers, on a workspace served by several servers (design 0020), lists their addresses
	// (comma-separated): the supervisor moves to the next when one cannot be reached, and
	// relays the run's MLflow client to whichever it uses.
	Servers string `json:"servers,omitempty"`
	// Replica is set for a run that serves a replica of an online deployment (design 0014).
	Replica *ReplicaConfig `json:"replica,omitempty"`
}

// ReplicaConfig is what a replica's server needs to answer only the workspace's router.
type ReplicaConfig struct {
	// Secret is what every request of the router carries (scoring.SecretHeader): the replica
	// refuses any other request but its health route's.
	Secret string `json:"secret"`
	// AllInterfaces makes the replica listen on every address of its node, for a router that
	// reaches it at another address than the one on its route to the server (an attached VM,
	// whose supervisor reaches the server through its SSH tunnel on loopback). Otherwise it
	// listens only on the address it reports: loopback on the server's own machine.
	AllInterfaces bool `json:"all_interfaces,omitempty"`
}

// StatusReport is a supervisor's report of a phase change (POST /api/runs/{id}/status).
type StatusReport struct {
	State    job.State `json:"state"`
	Reason   string    `json:"reason,omitempty"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Time     time.Time `json:"time"`
	Warnings []string  `json:"warnings,omitempty"`
	// Timings are durations (seconds) of work inside a phase, added to the run's timings.
	Timings map[string]float64 `json:"timings,omitempty"`
	// Node is the reporting node's rank in a multi-node run. Only node 0 reports the run's
	// phases and end; another node reports only its failure, which stops the run's other nodes
	// and becomes the run's reason when node 0 reports the end.
	Node int `json:"node_rank,omitempty"`
	// Command, with Running, is the command bound to the run's inputs and outputs on this
	// node: what job show prints as what ran.
	Command string `json:"command,omitempty"`
}

// StatusReply tells the supervisor the run's state as the server sees it.
type StatusReply struct {
	State job.State `json:"state"`
	// Servers, in heartbeat replies on a workspace served by several servers, lists their
	// addresses (comma-separated; design 0020).
	Servers string `json:"servers,omitempty"`
	Cancel  bool   `json:"cancel"`
	// Reason says why the supervisor should stop (with Cancel), when not a user's cancel.
	Reason string `json:"reason,omitempty"`
	// Token, in heartbeat replies, is a fresh run token that replaces the supervisor's (tokens
	// expire; a live run's supervisor thus never holds an expired one).
	Token string `json:"token,omitempty"`
}

// LogBatch ships log lines; Lines are consecutive, numbered from 1 per file.
type LogBatch struct {
	File  string        `json:"file"`
	Lines []job.LogLine `json:"lines"`
}

// Ack says up to which sequence number the server has everything.
type Ack struct {
	Acked int64 `json:"acked"`
}

// MetricBatch ships metrics; Seq numbers are consecutive from 1.
type MetricBatch struct {
	Metrics []job.Metric `json:"metrics"`
}

// ArtifactsReport registers one node's collected artifacts (manifests already uploaded). A
// node's part is write-once: the same report again is accepted (a retry), a different one is
// refused (409). Node 0's part of a single-node run is the run's artifacts; on a multi-node
// run the run's artifacts are assembled from every node's part (see ArtifactsReply).
type ArtifactsReport struct {
	Artifacts    string            `json:"artifacts"`
	NamedOutputs map[string]string `json:"named_outputs,omitempty"`
	// Node is the node's rank in a multi-node run (0 elsewhere).
	Node int `json:"node_rank,omitempty"`
}

// ArtifactsReply answers node 0's ArtifactsReport: WaitingFor lists the nodes whose parts the
// run's artifacts still wait for; node 0 sends its report again until it is empty (the server
// assembles the artifacts without a node that does not deliver within its wait, and says so on
// the run). Empty (or no body, from an older server) means the artifacts are complete.
type ArtifactsReply struct {
	WaitingFor []int `json:"waiting_for,omitempty"`
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// SupervisorConfig is the file a backend writes for `hangar supervise --config FILE` (mode 0600: it holds the run token).
type SupervisorConfig struct {
	RunID string `json:"run_id"`
	Token string `json:"token"`
	// ServerURL is the workspace server's address as seen from the node.
	ServerURL string `json:"server_url"`
	// ServerURLFile, when set, is a JSON file with a "url" field that is re-read when the server
	// cannot be reached (a restarted local server may listen elsewhere).
	ServerURLFile string `json:"server_url_file,omitempty"`
	// ServerCA is the PEM of the certificate an https server serves (or of its CA): the only one
	// the supervisor trusts (api.TLSConfig). ServerName, when set, is the name it verifies in
	// place of the URL's host (an SSH node reaches the server through a tunnel).
	ServerCA   string `json:"server_ca,omitempty"`
	ServerName string `json:"server_name,omitempty"`
	// Dir is the run's directory on the node; everything the run writes stays under it.
	Dir string `json:"dir"`
	// CacheDir is the node's content-addressed blob cache, shared by runs.
	CacheDir string `json:"cache_dir"`
	// LocalBlobDir, when set, is a blob store on the same machine to copy blobs from before asking the server.
	LocalBlobDir string `json:"local_blob_dir,omitempty"`
	// EnvDir is the node's environment cache (default: envs/ beside CacheDir).
	EnvDir string `json:"env_dir,omitempty"`
	// ObjectCacheBytes is the most the node's cache of objects read from object stores (objects/
	// beside CacheDir) keeps once the supervisor pruned it after its downloads: 0 for
	// objstore.DefaultCacheShare percent of its filesystem's size, negative for no limit.
	ObjectCacheBytes int64 `json:"object_cache_bytes,omitempty"`
	// MaxOfflineSeconds is how long the supervisor waits for an unreachable server before giving
	// up (default a day).
	MaxOfflineSeconds int64 `json:"max_offline_seconds,omitempty"`
	// NodeID is the cluster node the supervisor runs on ("" elsewhere).
	NodeID string `json:"node_id,omitempty"`
	// Hide are directories of the node the run's processes must not see (the workspace's home,
	// the node's work directory): its secrets, tokens and other runs. See internal/runbox.
	Hide []string `json:"hide,omitempty"`
	// Nodes, when set, are the run's node addresses in rank order as the engine that started the
	// supervisors names them (Kubernetes: the DNS names of an Indexed Job's pods); they replace
	// the server's, and NodeRank is this supervisor's node among them.
	Nodes    []string `json:"nodes,omitempty"`
	NodeRank int      `json:"node_rank,omitempty"`
	// InImage is the image the supervisor already runs in (a Kubernetes pod): a job whose
	// environment names it runs here, without a container runtime.
	InImage string `json:"in_image,omitempty"`
	// Pod is set when the supervisor runs in a Kubernetes pod: the pod is the run's sandbox and
	// cgroup, so the supervisor makes neither.
	Pod bool `json:"pod,omitempty"`
	// ServeGate, when set, makes the supervisor the sidecar of a pod whose main container is the
	// replica's own image (Kubernetes, an image that serves by its own entrypoint): it runs no
	// command; it writes "ready" to this file once the model is in place, or why the run ended
	// before, and the pod's gate container waits for that before the image starts.
	ServeGate string `json:"serve_gate,omitempty"`
	// ServeModel is the path that pod's serving container mounts as its model (a link in the runs
	// volume): the supervisor points it at the model it materialized.
	ServeModel string `json:"serve_model,omitempty"`
	// ServePort is the port a replica whose spec names none listens on (a Kubernetes
	// Deployment's pods: their Service has one port); 0 lets the supervisor pick a free one.
	ServePort int `json:"serve_port,omitempty"`
}

// EnvironmentVersion is one registered version of an environment.
type EnvironmentVersion struct {
	Name      string          `json:"name"`
	Version   string          `json:"version"`
	Spec      job.Environment `json:"spec"`
	CreatedAt time.Time       `json:"created_at"`
}

// ExecRequest asks the supervisor of one node of a multi-node run to run a command there (the MPI
// launcher starting its daemons through `hangar mpi-rsh`).
type ExecRequest struct {
	ID       string `json:"id,omitempty"`
	NodeRank int    `json:"node_rank"`
	Command  string `json:"command"`
}

// ExecStatus is how a relayed command ended.
type ExecStatus struct {
	Done     bool   `json:"done"`
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output,omitempty"`
}
