package compute

import (
	"encoding/json"
	"strings"
	"time"
)

// Target types. Aliases from the Azure ML schema are normalised by Normalize.
const (
	TypeLocal      = "local"
	TypeCluster    = "cluster"
	TypeInstance   = "instance"
	TypeSSH        = "ssh"
	TypeSlurm      = "slurm"
	TypeKubernetes = "kubernetes"
)

// LocalName is the built-in target every workspace has.
const LocalName = "local"

// Target is a named compute target of a workspace.
type Target struct {
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Description string          `json:"description,omitempty"`
	Properties  json.RawMessage `json:"properties,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
}

// NormalizeType maps Azure ML type names to Hangar's (amlcompute → cluster, virtualmachine → ssh, ...).
func NormalizeType(t string) string {
	switch strings.ToLower(t) {
	case "amlcompute", "cluster":
		return TypeCluster
	case "computeinstance", "instance":
		return TypeInstance
	case "virtualmachine", "ssh":
		return TypeSSH
	default:
		return strings.ToLower(t)
	}
}

// Builtin returns the targets every workspace has.
func Builtin(now time.Time) []Target {
	return []Target{{
		Name:        LocalName,
		Type:        TypeLocal,
		Description: "this machine: runs jobs next to the workspace server",
		CreatedAt:   now,
	}}
}

// NodeInfo describes a machine that runs jobs.
type NodeInfo struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Kernel      string `json:"kernel,omitempty"`
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes"`
	GPUs        []GPU  `json:"gpus,omitempty"`
	// ContainerRuntime is the container runtime found on the node ("" when none).
	ContainerRuntime string `json:"container_runtime,omitempty"`
	// Address is where the run's other nodes reach this one (distributed training's MASTER_ADDR).
	Address string `json:"address,omitempty"`
}

// GPU is one accelerator of a node.
type GPU struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	UUID        string `json:"uuid,omitempty"`
}
