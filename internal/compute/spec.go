package compute

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"time"
)

// Defaults the compute YAML decoder fills in (SPEC.md §1 and Hangar's extensions).
const (
	DefaultSize                    = "Standard_DS3_v2"
	DefaultIdleTimeBeforeScaleDown = 120 // seconds
	DefaultMaxProvisionRetries     = 3
	DefaultProvisionTimeout        = 900 // seconds; the autoscaler's default
	DefaultJoinTimeout             = 120 // seconds, from the provider creating the machine to its agent joining
	DefaultProviderTimeout         = 600 // seconds, per create or delete hook
	DefaultSSHPort                 = 22
	DefaultWorkDir                 = "~/.hangar"
	DefaultNamespace               = "default"
)

// Enum values of the compute YAML: cluster tiers, provider types, container runtimes, identity types.
const (
	TierDedicated      = "dedicated"
	TierLowPriority    = "low_priority"
	ProviderLocal      = "local"
	ProviderCommand    = "command"
	RuntimeDocker      = "docker"
	RuntimePodman      = "podman"
	IdentityNone       = "none"
	IdentitySystem     = "system_assigned"
	IdentityUser       = "user_assigned"
	IdentitySystemUser = "system_assigned,user_assigned"
)

// redactedPlaceholder is what Redacted puts in place of a secret.
const redactedPlaceholder = "***"

// Types lists the normalised target types, in the order messages show them.
var Types = []string{TypeLocal, TypeCluster, TypeInstance, TypeSSH, TypeSlurm, TypeKubernetes, TypeServerless}

// Spec is a decoded compute YAML: the common fields and, for its Type, exactly one of
// the kind-specific parts. It is stored as a Target's Properties.
type Spec struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"` // one of Types
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Location    string            `json:"location,omitempty"`
	// ResourceID is kept as written: an ARM id, or for ssh a host name.
	ResourceID string `json:"resource_id,omitempty"`
	// Identity is the Azure identity block, kept verbatim with its type normalised;
	// Hangar stores it and does not use it.
	Identity map[string]any `json:"identity,omitempty"`

	Local      *LocalSpec      `json:"local,omitempty"`
	Cluster    *ClusterSpec    `json:"cluster,omitempty"`
	Instance   *InstanceSpec   `json:"instance,omitempty"`
	SSH        *SSHSpec        `json:"ssh,omitempty"`
	Slurm      *SlurmSpec      `json:"slurm,omitempty"`
	Kubernetes *KubernetesSpec `json:"kubernetes,omitempty"`
	Serverless *ServerlessSpec `json:"serverless,omitempty"`
}

// LocalSpec configures a `type: local` target (the machine the server runs on).
type LocalSpec struct {
	RequireContainer bool `json:"require_container"`
	// MaxConcurrentRuns bounds the runs at once; 0 means no limit.
	MaxConcurrentRuns int `json:"max_concurrent_runs"`
	// ContainerRuntime is docker, podman, or "" to use whichever is found.
	ContainerRuntime string `json:"container_runtime,omitempty"`
}

// ClusterSpec is a managed autoscaling cluster (`amlcompute`/`cluster`, SPEC.md §1.1).
type ClusterSpec struct {
	Size         string `json:"size"`
	Tier         string `json:"tier"` // dedicated | low_priority
	MinInstances int    `json:"min_instances"`
	MaxInstances int    `json:"max_instances"`
	// IdleTimeBeforeScaleDown is in seconds (0 releases idle nodes at once).
	IdleTimeBeforeScaleDown int64            `json:"idle_time_before_scale_down"`
	SSHPublicAccessEnabled  bool             `json:"ssh_public_access_enabled"`
	SSHSettings             *SSHSettings     `json:"ssh_settings,omitempty"`
	NetworkSettings         *NetworkSettings `json:"network_settings,omitempty"`
	EnableNodePublicIP      bool             `json:"enable_node_public_ip"`
	// Provider is where nodes come from (Hangar extension).
	Provider Provider `json:"provider"`
	// MaxProvisionRetries is how many consecutive failed node provisionings the cluster
	// retries (with backoff) before it stops creating nodes; 0 means do not retry.
	MaxProvisionRetries int `json:"max_provision_retries"`
	// ProvisionTimeout is how long, in seconds, a new node may take to join.
	ProvisionTimeout int64 `json:"provision_timeout"`
	// JoinTimeout (Hangar extension) is how long, in seconds, a node's agent may take to join
	// once the provider created its machine (its create hook returned); 0 means
	// DefaultJoinTimeout. A node that has not joined when either timeout ends is deleted.
	JoinTimeout int64 `json:"join_timeout,omitempty"`
	// QuotaGroup (set by Hangar on a serverless pool's clusters) counts the cluster's runs,
	// in instances, against one quota shared by every cluster of the group: at most
	// QuotaGroupInstances instances held by runs at once (design 0017).
	QuotaGroup          string `json:"quota_group,omitempty"`
	QuotaGroupInstances int    `json:"quota_group_instances,omitempty"`
	// Isolated (Hangar extension) treats the cluster's size as isolated whatever the catalog
	// says: a run never shares a node with another run.
	Isolated bool `json:"isolated,omitempty"`
}

// SSHSettings is the ssh_settings block of clusters and compute instances.
type SSHSettings struct {
	AdminUsername string `json:"admin_username,omitempty"`
	AdminPassword string `json:"admin_password,omitempty"`
	// SSHKeyValue is an SSH public key line.
	SSHKeyValue string `json:"ssh_key_value,omitempty"`
}

// NetworkSettings is accepted and stored; Hangar does not use it.
type NetworkSettings struct {
	VNetName string `json:"vnet_name,omitempty"`
	Subnet   string `json:"subnet,omitempty"`
}

// Provider says how a cluster's nodes are created: `local` starts agents on the
// server's machine; `command` runs a create and a delete hook there.
type Provider struct {
	Type string `json:"type"` // local | command
	// Create and Delete are shell command lines; a leading relative script path was made
	// absolute against the YAML file's folder.
	Create string `json:"create,omitempty"`
	Delete string `json:"delete,omitempty"`
	// Preempted (optional, for low_priority clusters) prints the provider ids of machines the
	// cloud took back, one per line.
	Preempted string `json:"preempted,omitempty"`
	// Timeout bounds each hook, in seconds.
	Timeout int64             `json:"timeout,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// InstanceSpec is a compute instance (`computeinstance`/`instance`, SPEC.md §1.2): one
// development node, started and stopped, owned by a user. Hangar runs it as a one-node pool of
// the cluster backend (design 0018); network and identity settings are stored as written.
type InstanceSpec struct {
	Size string `json:"size"`
	// IdleTimeBeforeShutdownMinutes is 0 when the instance never stops by itself.
	IdleTimeBeforeShutdownMinutes int               `json:"idle_time_before_shutdown_minutes,omitempty"`
	SSHPublicAccessEnabled        bool              `json:"ssh_public_access_enabled"`
	SSHSettings                   *SSHSettings      `json:"ssh_settings,omitempty"`
	NetworkSettings               *NetworkSettings  `json:"network_settings,omitempty"`
	EnableNodePublicIP            bool              `json:"enable_node_public_ip"`
	CreateOnBehalfOf              map[string]string `json:"create_on_behalf_of,omitempty"`
	Schedules                     *Schedules        `json:"schedules,omitempty"`
	SetupScripts                  *SetupScripts     `json:"setup_scripts,omitempty"`
	CustomApplications            []any             `json:"custom_applications,omitempty"`
	// Provider is where the instance's node comes from (Hangar extension, as for clusters).
	Provider Provider `json:"provider"`
	// Owner is the instance's user: create_on_behalf_of's user_object_id, else the creator
	// (set by the server); only the owner may connect to it.
	Owner string `json:"owner,omitempty"`
}

// Schedules is an instance's `schedules:` block.
type Schedules struct {
	ComputeStartStop []StartStopSchedule `json:"compute_start_stop,omitempty"`
}

// StartStopSchedule is one schedules.compute_start_stop entry, as Azure writes it.
type StartStopSchedule struct {
	Action  string          `json:"action"` // start | stop
	State   string          `json:"state"`  // enabled | disabled
	Trigger ScheduleTrigger `json:"trigger"`
	// Cron is the trigger as a 5-field cron expression (a recurrence turned into one).
	Cron string `json:"cron"`
}

// ScheduleTrigger is a schedule's trigger: a cron expression or a recurrence, in a time zone.
type ScheduleTrigger struct {
	Type       string             `json:"type"` // cron | recurrence
	Expression string             `json:"expression,omitempty"`
	StartTime  string             `json:"start_time,omitempty"`
	TimeZone   string             `json:"time_zone,omitempty"`
	Frequency  string             `json:"frequency,omitempty"`
	Interval   int                `json:"interval,omitempty"`
	Schedule   *RecurrencePattern `json:"schedule,omitempty"`
}

// RecurrencePattern is a recurrence trigger's `schedule:`.
type RecurrencePattern struct {
	Hours     []int    `json:"hours,omitempty"`
	Minutes   []int    `json:"minutes,omitempty"`
	WeekDays  []string `json:"week_days,omitempty"`
	MonthDays []int    `json:"month_days,omitempty"`
}

// SetupScripts is an instance's `setup_scripts:` block.
type SetupScripts struct {
	// CreationScript runs once, at the instance's first start; StartupScript at every start.
	CreationScript *SetupScript `json:"creation_script,omitempty"`
	StartupScript  *SetupScript `json:"startup_script,omitempty"`
}

// SetupScript is a script run on the instance's node.
type SetupScript struct {
	// Path is the script file as written (path, or script_source_path).
	Path string `json:"path"`
	// Args are its arguments (command, or script_arguments), split into words when decoded.
	Args []string `json:"args,omitempty"`
	// TimeoutMinutes bounds the script (timeout_minutes, or timeout); 0 means the default.
	TimeoutMinutes int `json:"timeout_minutes,omitempty"`
	// Content is the script's text, read when the file was decoded: it runs on the node.
	Content string `json:"content"`
}

// SSHHost is a machine reached over SSH: an attached VM, or a Slurm login node.
type SSHHost struct {
	Host          string `json:"host"`
	Port          int    `json:"port"`
	AdminUsername string `json:"admin_username"`
	AdminPassword string `json:"admin_password,omitempty"`
	// PrivateKeyFile is the absolute path the key was read from; PrivateKey its content.
	PrivateKeyFile string `json:"ssh_private_key_file,omitempty"`
	PrivateKey     string `json:"private_key,omitempty"`
	// HostKey pins the host's public key ("ssh-ed25519 AAAA..."); KnownHosts names an
	// OpenSSH known_hosts file instead (absolute). With neither, the key seen when the
	// target is attached is pinned.
	HostKey    string `json:"host_key,omitempty"`
	KnownHosts string `json:"known_hosts,omitempty"`
	// WorkDir is where Hangar keeps its files on the host (~ is the login's home).
	WorkDir string `json:"work_dir"`
}

// Address returns host:port.
func (h SSHHost) Address() string {
	return net.JoinHostPort(h.Host, strconv.Itoa(h.Port))
}

// SSHSpec is an attached VM (`virtualmachine`/`ssh`, SPEC.md §1.4).
type SSHSpec struct {
	SSHHost
	RequireContainer bool `json:"require_container"`
}

// SlurmSpec is an attached Slurm cluster (Hangar `type: slurm`).
type SlurmSpec struct {
	Partition string `json:"partition,omitempty"`
	Account   string `json:"account,omitempty"`
	QOS       string `json:"qos,omitempty"`
	// Login is where Slurm commands run; nil runs them on the server's machine.
	Login *SSHHost `json:"login,omitempty"`
	// MaxNodes bounds the nodes Hangar's runs hold at once; 0 means no limit.
	MaxNodes int `json:"max_nodes,omitempty"`
	// TimeLimitSeconds is the default --time for runs without limits.timeout; 0 leaves
	// it to the partition.
	TimeLimitSeconds int64                    `json:"time_limit_seconds,omitempty"`
	SbatchArgs       []string                 `json:"sbatch_args,omitempty"`
	SizeMap          map[string]SlurmSize     `json:"size_map,omitempty"`
	PriorityMap      map[string]SlurmPriority `json:"priority_map,omitempty"`
	// SlurmConf is set as SLURM_CONF for the commands: absolute on the server's machine,
	// or as written on the login host.
	SlurmConf string `json:"slurm_conf,omitempty"`
}

// SlurmSize maps a Hangar size name to sbatch resources.
type SlurmSize struct {
	CPUsPerTask int    `json:"cpus_per_task,omitempty"`
	Mem         string `json:"mem,omitempty"`  // sbatch --mem, like 16G
	Gres        string `json:"gres,omitempty"` // sbatch --gres, like gpu:2
}

// SlurmPriority maps a job priority (low, medium, high) to sbatch --nice and --qos.
type SlurmPriority struct {
	Nice int    `json:"nice,omitempty"`
	QOS  string `json:"qos,omitempty"`
}

// KubernetesSpec is an attached Kubernetes cluster (SPEC.md §1.3) and Hangar's settings for
// the Jobs it creates there.
type KubernetesSpec struct {
	Namespace string `json:"namespace"`
	// Kubeconfig is an absolute path; "" uses the in-cluster or default configuration.
	Kubeconfig    string                  `json:"kubeconfig,omitempty"`
	Context       string                  `json:"context,omitempty"`
	InstanceTypes map[string]InstanceType `json:"instance_types,omitempty"`
	// DefaultInstanceType is the instance type of jobs that name none ("" = no requests).
	DefaultInstanceType string `json:"default_instance_type,omitempty"`
	// DefaultImage is the pod image of jobs whose environment names no image.
	DefaultImage string `json:"default_image,omitempty"`
	// Supervisor says how the hangar binary reaches the pods: copied by an init container
	// from an image, or mounted from a directory of every node.
	Supervisor KubeSupervisor `json:"supervisor,omitzero"`
	// ServerURL is the workspace server's address as the pods reach it ("" = the server's own).
	ServerURL string `json:"server_url,omitempty"`
	// HostNetwork runs pods in their node's network namespace (single-node clusters, servers
	// on the node's loopback).
	HostNetwork bool `json:"host_network,omitempty"`
	// QueueName is the Kueue LocalQueue jobs are submitted to ("" = no Kueue label).
	QueueName string `json:"queue_name,omitempty"`
	// PodLabels and PodAnnotations are added to every pod (Hangar's own labels win).
	PodLabels      map[string]string `json:"pod_labels,omitempty"`
	PodAnnotations map[string]string `json:"pod_annotations,omitempty"`
	// Properties is Azure's pass-through map, kept verbatim.
	Properties map[string]any `json:"properties,omitempty"`
}

// KubeSupervisor is where the supervisor binary comes from: exactly one of Image (an image
// holding a static hangar binary at /usr/local/bin/hangar) and HostPath (a node directory
// holding a hangar binary).
type KubeSupervisor struct {
	Image    string `json:"image,omitempty"`
	HostPath string `json:"host_path,omitempty"`
}

// InstanceType is a named pod shape (Azure's InstanceType CRD spec).
type InstanceType struct {
	NodeSelector map[string]string `json:"node_selector,omitempty"`
	Requests     ResourceList      `json:"requests,omitzero"`
	Limits       ResourceList      `json:"limits,omitzero"`
	Tolerations  []Toleration      `json:"tolerations,omitempty"`
}

// Toleration is a Kubernetes pod toleration.
type Toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"` // Equal | Exists
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"` // NoSchedule | PreferNoSchedule | NoExecute | ""
}

// ResourceList holds Kubernetes quantities as written ("500m", "2Gi").
type ResourceList struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
	GPU    int    `json:"nvidia.com/gpu,omitempty"`
}

// Target returns the stored form of the spec: a Target whose Properties hold it.
func (s *Spec) Target(now time.Time) (Target, error) {
	props, err := json.Marshal(s)
	if err != nil {
		return Target{}, fmt.Errorf("encode compute %s: %w", s.Name, err)
	}
	return Target{Name: s.Name, Type: s.Type, Description: s.Description, Properties: props, CreatedAt: now}, nil
}

// Secrets lists the spec's non-empty secret values (passwords, private keys), for
// redacting them from messages.
func (s *Spec) Secrets() []string {
	var out []string
	add := func(v string) {
		if v != "" {
			out = append(out, v)
		}
	}
	for _, h := range s.hosts() {
		add(h.AdminPassword)
		add(h.PrivateKey)
	}
	for _, st := range s.sshSettings() {
		add(st.AdminPassword)
	}
	return out
}

// Redacted returns a copy of the spec with passwords and private keys replaced by "***",
// for showing it.
func (s *Spec) Redacted() *Spec {
	c := *s
	if s.SSH != nil {
		v := *s.SSH
		v.SSHHost = redactHost(v.SSHHost)
		c.SSH = &v
	}
	if s.Slurm != nil && s.Slurm.Login != nil {
		v := *s.Slurm
		h := redactHost(*v.Login)
		v.Login = &h
		c.Slurm = &v
	}
	if s.Cluster != nil && s.Cluster.SSHSettings != nil {
		v := *s.Cluster
		v.SSHSettings = redactSettings(v.SSHSettings)
		c.Cluster = &v
	}
	if s.Instance != nil && s.Instance.SSHSettings != nil {
		v := *s.Instance
		v.SSHSettings = redactSettings(v.SSHSettings)
		c.Instance = &v
	}
	return &c
}

func (s *Spec) hosts() []*SSHHost {
	var out []*SSHHost
	if s.SSH != nil {
		out = append(out, &s.SSH.SSHHost)
	}
	if s.Slurm != nil && s.Slurm.Login != nil {
		out = append(out, s.Slurm.Login)
	}
	return out
}

func (s *Spec) sshSettings() []*SSHSettings {
	var out []*SSHSettings
	if s.Cluster != nil && s.Cluster.SSHSettings != nil {
		out = append(out, s.Cluster.SSHSettings)
	}
	if s.Instance != nil && s.Instance.SSHSettings != nil {
		out = append(out, s.Instance.SSHSettings)
	}
	return out
}

func redactHost(h SSHHost) SSHHost {
	h.AdminPassword = redact(h.AdminPassword)
	h.PrivateKey = redact(h.PrivateKey)
	return h
}

func redactSettings(st *SSHSettings) *SSHSettings {
	v := *st
	v.AdminPassword = redact(v.AdminPassword)
	return &v
}

func redact(s string) string {
	if s == "" {
		return ""
	}
	return redactedPlaceholder
}
