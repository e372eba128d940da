package spec

import (
	"github.com/hangar-ml/hangar/internal/pattern"
	"math"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/compute"
)

var (
	// targetName is Azure's compute name rule: 2 to 32 letters, digits and hyphens,
	// starting with a letter. Every such name is also a valid job `compute:` reference.
	targetName = pattern.New(`^[a-zA-Z][a-zA-Z0-9-]{1,31}$`)
	// computeTypes are the `type:` values a compute file may have: Hangar's names and
	// Azure's aliases (normalised by compute.NormalizeType), and synapsespark, which is
	// recognised only to be refused.
	computeTypes = []string{
		"local", "amlcompute", "cluster", "computeinstance", "instance", "virtualmachine", "ssh",
		"slurm", "kubernetes", "serverless", "synapsespark",
	}
	// computeReadOnly are the output-only keys of a compute (SPEC.md §1): ignored with a
	// warning, so that `az ml compute show -o yaml` output can be fed back.
	computeReadOnly = []string{
		"id", "provisioning_state", "provisioning_errors", "created_on", "state", "last_operation",
		"services", "os_image_metadata", "compute_location", "public_key_data",
	}
)

// Keys that --set may create in a compute file: the union over all compute kinds (the
// decoder then refuses those the file's type does not have). `nvidia.com/gpu` holds a
// dot, so it is set by replacing its whole requests/limits mapping.
var computeKeys = append(append([]string{
	"name", "type", "description", "location", "resource_id", "tags.*",
	"identity.type",
	// local
	"require_container", "max_concurrent_runs", "container_runtime",
	// cluster and instance
	"size", "tier", "min_instances", "max_instances", "idle_time_before_scale_down",
	"ssh_public_access_enabled", "ssh_settings.ssh_key_value", "enable_node_public_ip",
	"network_settings.vnet_name", "network_settings.subnet",
	"provider.type", "provider.create", "provider.delete", "provider.preempted", "provider.timeout", "provider.env.*",
	"max_provision_retries", "provision_timeout", "join_timeout", "isolated",
	"idle_time_before_shutdown_minutes", "idle_time_before_shutdown",
	"create_on_behalf_of.user_tenant_id", "create_on_behalf_of.user_object_id",
	// serverless
	"sizes", "default_size",
	// slurm
	"partition", "account", "qos", "max_nodes", "time_limit", "slurm_conf",
	"size_map.*.cpus_per_task", "size_map.*.mem", "size_map.*.gres",
	"priority_map.*.nice", "priority_map.*.qos",
	// kubernetes
	"namespace", "kubeconfig", "context", "default_instance_type", "default_image", "server_url",
	"host_network", "queue_name", "supervisor.image", "supervisor.host_path", "pod_labels.*", "pod_annotations.*",
	"instance_types.*.node_selector.*", "instance_types.*.requests.cpu", "instance_types.*.requests.memory",
	"instance_types.*.limits.cpu", "instance_types.*.limits.memory",
}, sshHostKeys...), prefixed("login.", append([]string{"resource_id"}, sshHostKeys...))...)

// sshHostKeys are the keys of an SSH host (an ssh target, or a Slurm login node).
var sshHostKeys = []string{
	"address", "host_key", "known_hosts", "work_dir",
	"ssh_settings.admin_username", "ssh_settings.admin_password", "ssh_settings.ssh_private_key_file",
	"ssh_settings.ssh_port",
}

// ParseComputeFile reads a compute YAML file (SPEC.md §1) with the same rules as
// ParseJobFile: strict decoding, every problem with its file, field path and line, and
// --set overrides. Relative paths resolve against the file's folder.
func ParseComputeFile(file string, sets []string, opts ...FileOption) (*compute.Spec, []string, error) {
	return parseFile(ParseCompute, file, sets, opts...)
}

// ParseCompute is ParseComputeFile for YAML already read; baseDir is the directory
// relative paths resolve against ("" means the current directory).
func ParseCompute(file string, data []byte, baseDir string, sets []string, opts ...FileOption) (*compute.Spec, []string, error) {
	d, root := begin(file, data, baseDir, sets, computeKeys, opts...)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	s := d.computes.computeSpec(root)
	return result(d, s)
}

// computeSpec decodes the root mapping with the field table of its type.
func (d *computeDecoder) computeSpec(root *yaml.Node) *compute.Spec {
	s := &compute.Spec{}
	t := lookup(root, "type")
	if isNull(t) {
		d.errorf(nil, "type", "required (one of %s)", strings.Join(computeTypes[:len(computeTypes)-1], ", "))
		return s
	}
	switch typ := d.enum(t, "type", computeTypes...); typ {
	case "":
		return s
	case "synapsespark":
		d.errorf(t, "type", "synapsespark computes are not supported by this workspace")
		return s
	default:
		s.Type = compute.NormalizeType(typ)
	}
	fs := d.computeCommon(s)
	var check func(got map[string]*yaml.Node)
	switch s.Type {
	case compute.TypeLocal:
		s.Local = d.localFields(fs)
	case compute.TypeCluster:
		s.Cluster, check = d.clusterFields(fs, s)
	case compute.TypeInstance:
		s.Instance, check = d.instances.instanceFields(fs, s)
	case compute.TypeSSH:
		s.SSH, check = d.sshFields(fs, s)
	case compute.TypeSlurm:
		s.Slurm, check = d.slurmFields(fs)
	case compute.TypeKubernetes:
		s.Kubernetes = d.kubernetesFields(fs, s)
		check = d.checkKubernetes(s.Kubernetes)
	case compute.TypeServerless:
		s.Serverless, check = d.serverlessFields(fs)
	}
	got := d.mapping(root, "", fs)
	d.checkTargetName(got["name"], s)
	if check != nil {
		check(got)
	}
	return s
}

// computeCommon is the field table every compute kind shares.
func (d *computeDecoder) computeCommon(s *compute.Spec) fields {
	fs := fields{
		"$schema":     nil,
		"type":        nil,
		"name":        func(n *yaml.Node, p string) { s.Name = d.str(n, p) },
		"description": func(n *yaml.Node, p string) { s.Description = d.str(n, p) },
		"location":    func(n *yaml.Node, p string) { s.Location = d.str(n, p) },
		"resource_id": func(n *yaml.Node, p string) { s.ResourceID = strings.TrimSpace(d.str(n, p)) },
		"tags":        func(n *yaml.Node, p string) { s.Tags = d.stringMap(n, p) },
	}
	for _, f := range computeReadOnly {
		fs[f] = func(n *yaml.Node, p string) { d.warnf(n, p, "read-only field ignored") }
	}
	return fs
}

// checkTargetName checks the target's name; n is its node (nil when absent).
func (d *computeDecoder) checkTargetName(n *yaml.Node, s *compute.Spec) {
	switch {
	case n == nil && s.Type == compute.TypeServerless:
		s.Name = compute.ServerlessName
	case n == nil:
		d.required(nil, "name")
	case s.Name == "":
		// d.str reported it
	case s.Type == compute.TypeServerless && s.Name != compute.ServerlessName:
		d.errorf(n, "name", "the serverless pool is named serverless (or leave name out), got %q", s.Name)
	case s.Type == compute.TypeServerless:
	case strings.EqualFold(s.Name, compute.ServerlessName):
		d.errorf(n, "name", "serverless is reserved for the workspace's serverless pool (type: serverless)")
	case strings.EqualFold(s.Name, compute.LocalName) && s.Type != compute.TypeLocal:
		d.errorf(n, "name", "local is the built-in local target; only type: local may use this name")
	case !targetName.MatchString(s.Name):
		d.expected(n, "name", "a name of 2 to 32 letters, digits and -, starting with a letter")
	}
}

// localFields adds the keys of `type: local`.
func (d *computeDecoder) localFields(fs fields) *compute.LocalSpec {
	l := &compute.LocalSpec{}
	fs["require_container"] = func(n *yaml.Node, p string) { l.RequireContainer, _ = d.boolean(n, p) }
	fs["max_concurrent_runs"] = func(n *yaml.Node, p string) { l.MaxConcurrentRuns, _ = d.boundedInt(n, p, 0, math.MaxInt32) }
	fs["container_runtime"] = func(n *yaml.Node, p string) {
		if l.ContainerRuntime = d.enum(n, p, compute.RuntimeDocker, compute.RuntimePodman, "auto"); l.ContainerRuntime == "auto" {
			l.ContainerRuntime = ""
		}
	}
	return l
}

// boundedInt decodes an integer within [lo, hi].
func (d *decoder) boundedInt(n *yaml.Node, path string, lo, hi int64) (int, bool) {
	v, ok := d.intAtLeast(n, path, lo)
	if ok && v > hi {
		d.errorf(n, path, "expected integer <= %d, got %d", hi, v)
		return 0, false
	}
	return int(v), ok
}

// port decodes a TCP port number.
func (d *decoder) port(n *yaml.Node, path string) (int, bool) {
	return d.boundedInt(n, path, 1, 65535)
}

// seconds decodes a duration in seconds: a YAML integer >= 0, or an ISO-8601 duration
// such as PT5M (fractions of a second round up).
func (d *decoder) seconds(n *yaml.Node, path string) (int64, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int":
			var v int64
			if n.Decode(&v) == nil && v >= 0 && v <= math.MaxInt32 {
				return v, true
			}
		case "!!str":
			if v, ok := isoSecondsOK(n.Value); ok && v <= math.MaxInt32 {
				return v, true
			}
		}
	}
	d.expected(n, path, "integer seconds >= 0 or an ISO-8601 duration like PT5M")
	return 0, false
}

// isoSecondsOK is isoSeconds that tells PT0S (0, true) from text that is not a duration.
func isoSecondsOK(s string) (int64, bool) {
	if !isoDuration.MatchString(s) || !strings.ContainsAny(s, "0123456789") {
		return 0, false
	}
	return isoSeconds(s), true
}

// computeIdentity decodes a compute's `identity:` (SPEC.md §1), kept verbatim with its
// type normalised.
func (d *computeDecoder) computeIdentity(n *yaml.Node, path string) map[string]any {
	out := map[string]any{}
	var typ string
	got := d.mapping(n, path, fields{
		"type": func(v *yaml.Node, p string) {
			typ = d.enum(v, p, compute.IdentitySystem, compute.IdentityUser, compute.IdentityNone, compute.IdentitySystemUser)
			out["type"] = typ
		},
		"user_assigned_identities": func(v *yaml.Node, p string) { out["user_assigned_identities"] = d.userIdentities(v, p) },
		"principal_id":             func(v *yaml.Node, p string) { d.warnf(v, p, "read-only field ignored") },
		"tenant_id":                func(v *yaml.Node, p string) { d.warnf(v, p, "read-only field ignored") },
	})
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if got["type"] == nil {
		d.required(n, join(path, "type"))
	}
	switch users := got["user_assigned_identities"]; {
	case typ == "":
	case strings.Contains(typ, compute.IdentityUser) && users == nil:
		d.errorf(n, join(path, "user_assigned_identities"), "required when type is %s", typ)
	case !strings.Contains(typ, compute.IdentityUser) && users != nil:
		d.errorf(users, join(path, "user_assigned_identities"), "only allowed when type includes user_assigned")
	}
	return out
}

// userIdentities decodes identity.user_assigned_identities: a list of identities, each
// named by resource_id, principal_id, client_id or object_id.
func (d *computeDecoder) userIdentities(n *yaml.Node, path string) []any {
	if n.Kind != yaml.SequenceNode {
		d.expected(n, path, "a list of identities")
		return nil
	}
	out := make([]any, 0, len(n.Content))
	for ip, c := range items(n, path) {
		c = resolve(c)
		if c.Kind != yaml.MappingNode {
			d.expected(c, ip, "an identity mapping like {resource_id: ...}")
			continue
		}
		id := map[string]any{}
		keep := func(key string) func(*yaml.Node, string) {
			return func(v *yaml.Node, p string) { id[key] = d.str(v, p) }
		}
		d.mapping(c, ip, fields{
			"resource_id": keep("resource_id"), "principal_id": keep("principal_id"),
			"client_id": keep("client_id"), "object_id": keep("object_id"),
		})
		if len(id) == 0 {
			d.errorf(c, ip, "expected resource_id, client_id, principal_id or object_id")
		}
		out = append(out, id)
	}
	return out
}

// localFile decodes a path to an existing local file: ~ is the user's home, a relative
// path resolves against the spec's folder. It returns the absolute path.
func (d *computeDecoder) localFile(n *yaml.Node, path string) (string, bool) {
	written := strings.TrimSpace(d.str(n, path))
	if written == "" {
		d.expected(n, path, "a local file path")
		return "", false
	}
	p, ok := d.expandHome(n, path, written)
	if !ok {
		return "", false
	}
	abs, info, ok := d.stat(n, path, p)
	if !ok {
		return "", false
	}
	if !info.Mode().IsRegular() {
		d.errorf(n, path, "%s is not a regular file", written)
		return "", false
	}
	return abs, true
}

// expandHome replaces a leading ~ with the user's home directory.
func (d *computeDecoder) expandHome(n *yaml.Node, path, p string) (string, bool) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, true
	}
	home, err := os.UserHomeDir()
	if err != nil {
		d.errorf(n, path, "%s: %v", p, err)
		return "", false
	}
	return filepath.Join(home, p[1:]), true
}
