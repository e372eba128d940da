package compute

import "strings"

// TypeServerless is the type of the workspace's serverless pool (design 0017). It is not a
// target jobs run on: a job that asks for serverless compute runs on one of the pool's
// clusters, one per size, which Hangar creates on first use.
const TypeServerless = "serverless"

// ServerlessName is the reserved name of the serverless pool, and what `compute: serverless`
// (or azureml:serverless) in a job refers to.
const ServerlessName = "serverless"

// ServerlessClusterPrefix starts the name of each of the pool's clusters:
// serverless_<size>. A user's compute name cannot hold an underscore, so these never collide
// with one (and the name still makes valid node ids: letters, digits, '_' and '-').
const ServerlessClusterPrefix = ServerlessName + "_"

// DefaultServerlessMaxInstances is the pool's quota when its file sets none.
const DefaultServerlessMaxInstances = 4

// ServerlessSpec is the workspace's serverless pool: where capacity comes from, which sizes
// jobs may ask for, and how much of it jobs may hold at once.
type ServerlessSpec struct {
	// Sizes are the size names jobs may ask for (resources.instance_type), in catalog case.
	Sizes []ServerlessSize `json:"sizes"`
	// DefaultSize is the size of jobs that name none (the first of Sizes unless set).
	DefaultSize string `json:"default_size"`
	// MaxInstances is the quota: the most instances the pool's jobs hold at once, all sizes
	// together.
	MaxInstances int `json:"max_instances"`
	// IdleTimeBeforeScaleDown is how long, in seconds, an idle node waits before it goes.
	IdleTimeBeforeScaleDown int64    `json:"idle_time_before_scale_down"`
	Provider                Provider `json:"provider"`
	MaxProvisionRetries     int      `json:"max_provision_retries"`
	ProvisionTimeout        int64    `json:"provision_timeout"`
	JoinTimeout             int64    `json:"join_timeout,omitempty"`
}

// ServerlessSize is one size the pool offers, with its own bound on nodes (0: only the
// pool's MaxInstances).
type ServerlessSize struct {
	Name         string `json:"name"`
	MaxInstances int    `json:"max_instances,omitempty"`
	// Isolated gives each run of this size nodes of its own (its cluster's Isolated).
	Isolated bool `json:"isolated,omitempty"`
}

// Size finds an offered size by name, in any case.
func (s *ServerlessSpec) Size(name string) (ServerlessSize, bool) {
	for _, z := range s.Sizes {
		if strings.EqualFold(z.Name, name) {
			return z, true
		}
	}
	return ServerlessSize{}, false
}

// SizeNames lists the offered sizes' names.
func (s *ServerlessSpec) SizeNames() []string {
	out := make([]string, 0, len(s.Sizes))
	for _, z := range s.Sizes {
		out = append(out, z.Name)
	}
	return out
}

// ServerlessSizeOf is the size a serverless pool's cluster holds, or "" when the target is
// not one of the pool's clusters.
func ServerlessSizeOf(target string) string {
	if size, ok := strings.CutPrefix(target, ServerlessClusterPrefix); ok {
		return size
	}
	return ""
}

// MachinePoolDescription says where the capacity of a workspace's serverless pool comes from
// while no owner has configured one.
const MachinePoolDescription = "this machine; no pool configured"

// MachinePool is the serverless pool of a workspace whose owner configured none: this
// machine's capacity, through agents the local provider starts (each a local-* slice of the
// machine by default; a job that names another size of the catalog gets its own), at most
// DefaultServerlessMaxInstances at once, released after the clusters' default idle time. It is
// never stored: configuring a pool (hangar compute create -f serverless.yml) replaces it.
func MachinePool() Spec {
	return Spec{
		Name: ServerlessName, Type: TypeServerless, Description: MachinePoolDescription,
		Serverless: &ServerlessSpec{
			Sizes:       []ServerlessSize{{Name: "local-quarter"}, {Name: "local-half"}, {Name: "local-full"}},
			DefaultSize: "local-quarter", MaxInstances: DefaultServerlessMaxInstances,
			IdleTimeBeforeScaleDown: DefaultIdleTimeBeforeScaleDown,
			Provider:                Provider{Type: ProviderLocal},
			MaxProvisionRetries:     DefaultMaxProvisionRetries,
			ProvisionTimeout:        DefaultProvisionTimeout,
		},
	}
}
