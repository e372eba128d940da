package spec

import "testing"

// One case per kind of mistake in a compute file: the message names the file, the field
// path, what was expected and the line.
func TestParseComputeErrors(t *testing.T) {
	for _, tt := range computeErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := parseComputeT(t, tt.yml)
			checkErr(t, err, tt.want)
		})
	}
}

const (
	sshOK   = "name: vm1\ntype: ssh\naddress: h\nssh_settings: {admin_username: u, admin_password: p}\n"
	slurmOK = "name: hpc\ntype: slurm\n"
	kubeOK  = "name: k8s\ntype: kubernetes\n"
	ciOK    = "name: ci1\ntype: instance\n"
	poolOK  = "name: pool\ntype: cluster\n"
)

var computeErrorTests = []struct{ name, yml, want string }{
	// shape, type and name
	{"malformed yaml", "name: [a\n", "compute.yml: line 1: malformed YAML: did not find expected ',' or ']'"},
	{"top level list", "- a\n", "compute.yml: line 1: expected a mapping at the top level, got a list"},
	{"type required", "name: a1\n", "compute.yml: type: required (one of local, amlcompute, cluster, computeinstance, instance, virtualmachine, ssh, slurm, kubernetes, serverless)"},
	{"unknown type", "name: a1\ntype: mainframe\n", `compute.yml: type: expected one of local, amlcompute, cluster, computeinstance, instance, virtualmachine, ssh, slurm, kubernetes, serverless, synapsespark, got "mainframe" (line 2)`},
	{"type not a string", "name: a1\ntype: [cluster]\n", "compute.yml: type: expected one of local, amlcompute"},
	{"synapse refused", "name: spark\ntype: SynapseSpark\nresource_id: /subscriptions/x\n", "compute.yml: type: synapsespark computes are not supported by this workspace (line 2)"},
	{"name required", "type: cluster\n", "compute.yml: name: required"},
	{"name starts with a digit", "name: 1pool\ntype: cluster\n", `compute.yml: name: expected a name of 2 to 32 letters, digits and -, starting with a letter, got "1pool" (line 1)`},
	{"name too long", "name: a2345678901234567890123456789012x\ntype: cluster\n", `compute.yml: name: expected a name of 2 to 32 letters, digits and -, starting with a letter, got "a2345678901234567890123456789012x" (line 1)`},
	{"name underscore", "name: my_pool\ntype: cluster\n", `compute.yml: name: expected a name of 2 to 32 letters, digits and -, starting with a letter, got "my_pool" (line 1)`},
	{"name serverless", "name: serverless\ntype: cluster\n", "compute.yml: name: serverless is reserved for the workspace's serverless pool (type: serverless) (line 1)"},
	{"name local for a cluster", "name: local\ntype: cluster\n", "compute.yml: name: local is the built-in local target; only type: local may use this name (line 1)"},
	{"duplicate key", poolOK + "size: a\nsize: b\n", "compute.yml: size: duplicate key (line 4)"},
	{"unknown field suggestion", poolOK + "max_instance: 4\n", `compute.yml: max_instance: unknown field; did you mean "max_instances"? (line 3)`},
	{"field of another kind", poolOK + "partition: gpu\n", "compute.yml: partition: unknown field (line 3)"},
	{"tags nested", poolOK + "tags: {a: [1]}\n", "compute.yml: tags.a: expected a scalar value, got a list (line 3)"},
	{"description mapping", poolOK + "description: {a: 1}\n", "compute.yml: description: expected a string, got a mapping (line 3)"},
	// identity
	{"identity type", poolOK + "identity: {type: magic}\n", `compute.yml: identity.type: expected one of system_assigned, user_assigned, none, system_assigned,user_assigned, got "magic" (line 3)`},
	{"identity type required", poolOK + "identity:\n  user_assigned_identities: []\n", "compute.yml: identity.type: required (line 4)"},
	{"identity user without list", poolOK + "identity:\n  type: user_assigned\n", "compute.yml: identity.user_assigned_identities: required when type is user_assigned (line 4)"},
	{"identity list for system", poolOK + "identity:\n  type: system_assigned\n  user_assigned_identities: [{resource_id: x}]\n", "compute.yml: identity.user_assigned_identities: only allowed when type includes user_assigned (line 5)"},
	{"identity entry empty", poolOK + "identity:\n  type: user_assigned\n  user_assigned_identities: [{}]\n", "compute.yml: identity.user_assigned_identities[0]: expected resource_id, client_id, principal_id or object_id (line 5)"},
	// cluster
	{"min above max", poolOK + "min_instances: 5\nmax_instances: 2\n", "compute.yml: min_instances: expected at most max_instances (2), got 5 (line 3)"},
	{"min above default max", poolOK + "min_instances: 3\n", "compute.yml: min_instances: expected at most max_instances (1), got 3 (line 3)"},
	{"max zero", poolOK + "max_instances: 0\n", "compute.yml: max_instances: expected integer >= 1, got 0 (line 3)"},
	{"min negative", poolOK + "min_instances: -1\n", "compute.yml: min_instances: expected integer >= 0, got -1 (line 3)"},
	{"max quoted", poolOK + "max_instances: '4'\n", `compute.yml: max_instances: expected integer, got "4" (line 3)`},
	{"idle negative", poolOK + "idle_time_before_scale_down: -1\n", "compute.yml: idle_time_before_scale_down: expected integer seconds >= 0 or an ISO-8601 duration like PT5M, got -1 (line 3)"},
	{"idle not a duration", poolOK + "idle_time_before_scale_down: 5m\n", `compute.yml: idle_time_before_scale_down: expected integer seconds >= 0 or an ISO-8601 duration like PT5M, got "5m" (line 3)`},
	{"tier", poolOK + "tier: spot\n", `compute.yml: tier: expected one of dedicated, low_priority, got "spot" (line 3)`},
	{"size with space", poolOK + "size: 'Standard DS3'\n", `compute.yml: size: expected a size name like Standard_DS3_v2, got "Standard DS3" (line 3)`},
	{"public ip not bool", poolOK + "enable_node_public_ip: maybe\n", `compute.yml: enable_node_public_ip: expected boolean, got "maybe" (line 3)`},
	{"cluster ssh without credentials", poolOK + "ssh_settings:\n  admin_username: u\n", "compute.yml: ssh_settings: expected admin_password or ssh_key_value (line 4)"},
	{"cluster ssh key not a key", poolOK + "ssh_settings: {admin_username: u, ssh_key_value: hello}\n", `compute.yml: ssh_settings.ssh_key_value: expected an SSH public key line like "ssh-ed25519 AAAA...", got "hello" (line 3)`},
	{"cluster ssh private key file", poolOK + "ssh_settings: {admin_username: u, ssh_private_key_file: keys/id}\n", "compute.yml: ssh_settings.ssh_private_key_file: unknown field (expected one of: admin_password, admin_username, ssh_key_value) (line 3)"},
	{"provider type", poolOK + "provider: {type: aws}\n", `compute.yml: provider.type: expected one of local, command, got "aws" (line 3)`},
	{"provider type required", poolOK + "provider: {create: x}\n", "compute.yml: provider.type: required (local or command) (line 3)"},
	{"provider command missing delete", poolOK + "provider:\n  type: command\n  create: make-node\n", "compute.yml: provider.delete: required (line 4)"},
	{"provider scalar command", poolOK + "provider: command\n", "compute.yml: provider: provider type command needs create and delete: write {type: command, create: ..., delete: ...} (line 3)"},
	{"provider local with hooks", poolOK + "provider:\n  type: local\n  create: make-node\n", "compute.yml: provider.create: only allowed for provider type command (line 5)"},
	{"provider script missing", poolOK + "provider: {type: command, create: ./nope.sh, delete: x}\n", "compute.yml: provider.create: ./nope.sh does not exist (line 3)"},
	{"provider script is a dir", poolOK + "provider: {type: command, create: ./dir, delete: x}\n", "compute.yml: provider.create: ./dir is a directory; expected a script (line 3)"},
	{"provider timeout", poolOK + "provider: {type: command, create: a, delete: b, timeout: 0}\n", "compute.yml: provider.timeout: expected integer seconds > 0, got 0 (line 3)"},
	{"provider env name", poolOK + "provider: {type: command, create: a, delete: b, env: {'A=B': 1}}\n", `compute.yml: provider.env.A=B: invalid environment variable name "A=B": expected a letter or _ then letters, digits or _, as a shell variable's name (line 3)`},
	{"provision timeout", poolOK + "provision_timeout: soon\n", `compute.yml: provision_timeout: expected integer seconds, got "soon" (line 3)`},
	{"provision retries", poolOK + "max_provision_retries: -2\n", "compute.yml: max_provision_retries: expected integer >= 0, got -2 (line 3)"},
	// instance
	{"instance idle too short", ciOK + "idle_time_before_shutdown_minutes: 10\n", "compute.yml: idle_time_before_shutdown_minutes: expected integer >= 15, got 10 (line 3)"},
	{"instance idle too long", ciOK + "idle_time_before_shutdown_minutes: 5000\n", "compute.yml: idle_time_before_shutdown_minutes: expected integer <= 4320, got 5000 (line 3)"},
	{"instance idle alias", ciOK + "idle_time_before_shutdown: PT5M\n", `compute.yml: idle_time_before_shutdown: expected a duration from PT15M to P3D, got "PT5M" (line 3)`},
	{"instance public ssh without key", ciOK + "ssh_public_access_enabled: true\n", "compute.yml: ssh_settings.ssh_key_value: required when ssh_public_access_enabled is true (line 3)"},
	{"instance admin password", ciOK + "ssh_settings: {ssh_key_value: " + testPubKey + ", admin_password: x}\n", "compute.yml: ssh_settings.admin_password: unknown field (expected one of: admin_username, ssh_key_value, ssh_port) (line 3)"},
	{"instance custom apps mapping", ciOK + "custom_applications: {a: 1}\n", "compute.yml: custom_applications: expected a list of applications, got a mapping (line 3)"},
	// ssh
	{"ssh settings required", "name: vm1\ntype: ssh\naddress: h\n", "compute.yml: ssh_settings: required (admin_username and admin_password or ssh_private_key_file)"},
	{"ssh user required", "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_password: p\n", "compute.yml: ssh_settings.admin_username: required (line 5)"},
	{"ssh credentials required", "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_username: u\n", "compute.yml: ssh_settings: expected admin_password or ssh_private_key_file (line 5)"},
	{"ssh key missing", "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_username: u\n  ssh_private_key_file: keys/nope\n", "compute.yml: ssh_settings.ssh_private_key_file: keys/nope does not exist (line 6)"},
	{"ssh key in home missing", "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_username: u\n  ssh_private_key_file: ~/.ssh/id_ed25519\n", "/.ssh/id_ed25519 does not exist (line 6)"},
	{"ssh key is public", "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_username: u\n  ssh_private_key_file: keys/id.pub\n", "compute.yml: ssh_settings.ssh_private_key_file: keys/id.pub is a public key; give the private key file (line 6)"},
	{"ssh key junk", "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_username: u\n  ssh_private_key_file: keys/junk\n", "compute.yml: ssh_settings.ssh_private_key_file: keys/junk does not look like a private key (expected a PEM block such as -----BEGIN OPENSSH PRIVATE KEY-----) (line 6)"},
	{"ssh key is a dir", "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_username: u\n  ssh_private_key_file: dir\n", "compute.yml: ssh_settings.ssh_private_key_file: dir is not a regular file (line 6)"},
	{"ssh port too big", "name: vm1\ntype: ssh\naddress: h\nssh_settings: {admin_username: u, admin_password: p, ssh_port: 70000}\n", "compute.yml: ssh_settings.ssh_port: expected integer <= 65535, got 70000 (line 4)"},
	{"ssh port zero", "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_username: u\n  admin_password: p\n  ssh_port: 0\n", "compute.yml: ssh_settings.ssh_port: expected integer >= 1, got 0 (line 7)"},
	{"ssh address port", "name: vm1\ntype: ssh\naddress: h:99999\nssh_settings: {admin_username: u, admin_password: p}\n", `compute.yml: address: expected a port from 1 to 65535, got "99999" (line 3)`},
	{"ssh address empty port", "name: vm1\ntype: ssh\naddress: 'h:'\nssh_settings: {admin_username: u, admin_password: p}\n", `compute.yml: address: expected a port from 1 to 65535, got "" (line 3)`},
	{"ssh address with user", "name: vm1\ntype: ssh\naddress: ml@h\nssh_settings: {admin_username: u, admin_password: p}\n", `compute.yml: address: "ml@h": give the user in ssh_settings.admin_username, not in the address (line 3)`},
	{"ssh address bad host", "name: vm1\ntype: ssh\naddress: 'bad host'\nssh_settings: {admin_username: u, admin_password: p}\n", `compute.yml: address: expected a host or host:port, got "bad host" (line 3)`},
	{"ssh address required", "name: vm1\ntype: ssh\nssh_settings: {admin_username: u, admin_password: p}\n", "compute.yml: address: required (a host or host:port; resource_id may name the host instead)"},
	{"ssh resource id without host", "name: vm1\ntype: ssh\nresource_id: /\nssh_settings: {admin_username: u, admin_password: p}\n", `compute.yml: address: required: resource_id "/" names no host; give address: <host>[:port] (line 3)`},
	{"ssh port disagrees", "name: vm1\ntype: ssh\naddress: h:2222\nssh_settings:\n  admin_username: u\n  admin_password: p\n  ssh_port: 22\n", "compute.yml: ssh_settings.ssh_port: 22 disagrees with the port in the address (2222) (line 7)"},
	{"ssh host key", sshOK + "host_key: ssh-ed25519 AAAAnotakey\n", `compute.yml: host_key: expected a public key line like "ssh-ed25519 AAAA..." (as in known_hosts, without the host), got "ssh-ed25519 AAAAnotakey" (line 5)`},
	{"ssh host key and known hosts", sshOK + "host_key: " + testPubKey + "\nknown_hosts: known_hosts\n", "compute.yml: known_hosts: host_key and known_hosts are mutually exclusive (line 6)"},
	{"ssh known hosts missing", sshOK + "known_hosts: ~/.ssh/known_hosts\n", "/.ssh/known_hosts does not exist (line 5)"},
	{"ssh require container", sshOK + "require_container: yes\n", `compute.yml: require_container: expected boolean, got "yes" (line 5)`},
	{"ssh work dir empty", sshOK + "work_dir: ' '\n", `compute.yml: work_dir: expected a directory path, got " " (line 5)`},
	// slurm
	{"slurm partition", slurmOK + "partition: 'gpu nodes'\n", `compute.yml: partition: expected a Slurm name (letters, digits, _ . , -), got "gpu nodes" (line 3)`},
	{"slurm time limit", slurmOK + "time_limit: 1h\n", `compute.yml: time_limit: expected a Slurm time like 30 (minutes), 1:00:00 or 2-12:00:00, got "1h" (line 3)`},
	{"slurm time limit zero", slurmOK + "time_limit: 0\n", `compute.yml: time_limit: expected a time limit > 0 and < 68 years, got "0" (line 3)`},
	{"slurm sbatch arg", slurmOK + "sbatch_args:\n  - --exclusive\n  - constraint=a100\n", `compute.yml: sbatch_args[1]: expected an sbatch option like --constraint=a100, got "constraint=a100" (line 5)`},
	{"slurm sbatch args string", slurmOK + "sbatch_args: --exclusive\n", `compute.yml: sbatch_args: expected a list of strings, got "--exclusive" (line 3)`},
	{"slurm mem", slurmOK + "size_map:\n  small: {mem: 16GB}\n", `compute.yml: size_map.small.mem: expected a Slurm memory size like 16G (digits, then K, M, G or T), got "16GB" (line 4)`},
	{"slurm gres", slurmOK + "size_map:\n  small: {gres: 'gpu 2'}\n", `compute.yml: size_map.small.gres: expected a Slurm gres like gpu:2 or gpu:a100:1, got "gpu 2" (line 4)`},
	{"slurm cpus", slurmOK + "size_map:\n  small: {cpus_per_task: 0}\n", "compute.yml: size_map.small.cpus_per_task: expected integer >= 1, got 0 (line 4)"},
	{"slurm size unknown key", slurmOK + "size_map:\n  small: {memory: 16G}\n", `compute.yml: size_map.small.memory: unknown field (expected one of: cpus_per_task, gres, mem) (line 4)`},
	{"slurm size scalar", slurmOK + "size_map:\n  small: 16G\n", `compute.yml: size_map.small: expected a mapping of cpus_per_task, mem and gres, got "16G" (line 4)`},
	{"slurm priority level", slurmOK + "priority_map:\n  urgent: {nice: 0}\n", "compute.yml: priority_map.urgent: expected one of low, medium, high (line 4)"},
	{"slurm priority twice", slurmOK + "priority_map:\n  low: {nice: 1}\n  LOW: {nice: 2}\n", "compute.yml: priority_map.LOW: duplicate priority low (line 5)"},
	{"slurm priority nice", slurmOK + "priority_map:\n  low: {nice: lots}\n", `compute.yml: priority_map.low.nice: expected integer, got "lots" (line 4)`},
	{"slurm max nodes", slurmOK + "max_nodes: -1\n", "compute.yml: max_nodes: expected integer >= 0, got -1 (line 3)"},
	{"slurm conf missing", slurmOK + "slurm_conf: etc/slurm.conf\n", "compute.yml: slurm_conf: etc/slurm.conf does not exist (line 3)"},
	{"slurm login settings", slurmOK + "login:\n  address: login1\n", "compute.yml: login.ssh_settings: required (admin_username and admin_password or ssh_private_key_file) (line 4)"},
	{"slurm login address", slurmOK + "login:\n  ssh_settings: {admin_username: u, admin_password: p}\n", "compute.yml: login.address: required (a host or host:port; resource_id may name the host instead) (line 4)"},
	{"slurm login container", slurmOK + "login: {address: h, ssh_settings: {admin_username: u, admin_password: p}, require_container: true}\n", "compute.yml: login.require_container: unknown field"},
	{"slurm login scalar", slurmOK + "login: login1\n", `compute.yml: login: expected a mapping, got "login1" (line 3)`},
	// kubernetes
	{"kube namespace", kubeOK + "namespace: ML_ns\n", `compute.yml: namespace: expected a namespace name (lower-case letters, digits and -, at most 63), got "ML_ns" (line 3)`},
	{"kube kubeconfig missing", kubeOK + "kubeconfig: ./kubeconfig\n", "compute.yml: kubeconfig: ./kubeconfig does not exist (line 3)"},
	{"kube cpu", kubeOK + "instance_types:\n  a:\n    requests: {cpu: lots}\n", `compute.yml: instance_types.a.requests.cpu: expected a CPU quantity like 2, 0.5 or 500m, got "lots" (line 5)`},
	{"kube memory", kubeOK + "instance_types:\n  a:\n    limits: {memory: 2 GB}\n", `compute.yml: instance_types.a.limits.memory: expected a memory quantity like 2Gi or 512Mi, got "2 GB" (line 5)`},
	{"kube gpu", kubeOK + "instance_types:\n  a:\n    limits: {nvidia.com/gpu: -1}\n", "compute.yml: instance_types.a.limits.nvidia.com/gpu: expected integer >= 0, got -1 (line 5)"},
	{"kube unknown resource", kubeOK + "instance_types:\n  a:\n    limits: {amd.com/gpu: 1}\n", "compute.yml: instance_types.a.limits.amd.com/gpu: unknown field (expected one of: cpu, memory, nvidia.com/gpu) (line 5)"},
	{"kube request over limit", kubeOK + "instance_types:\n  a:\n    requests: {cpu: 4, memory: 4Gi}\n    limits: {cpu: 2, memory: 8Gi}\n", "compute.yml: instance_types.a.requests.cpu: 4 is more than limits.cpu (2) (line 5)"},
	{"kube memory over limit", kubeOK + "instance_types:\n  a:\n    requests: {memory: 4Gi}\n    limits: {memory: 1Gi}\n", "compute.yml: instance_types.a.requests.memory: 4Gi is more than limits.memory (1Gi) (line 5)"},
	{"kube gpu mismatch", kubeOK + "instance_types:\n  a:\n    requests: {nvidia.com/gpu: 1}\n    limits: {nvidia.com/gpu: 2}\n", "compute.yml: instance_types.a.requests.nvidia.com/gpu: 1 differs from limits.nvidia.com/gpu (2); GPU requests must equal limits (line 5)"},
	{"kube instance type name", kubeOK + "instance_types:\n  'a b': {}\n", "compute.yml: instance_types.a b: expected an instance type name of letters, digits, _, . and - (line 4)"},
	{"kube node selector nested", kubeOK + "instance_types:\n  a:\n    node_selector: {x: {y: 1}}\n", "compute.yml: instance_types.a.node_selector.x: expected a scalar value, got a mapping (line 5)"},
	{"kube default instance type", kubeOK + "instance_types:\n  a: {}\ndefault_instance_type: b\n", `compute.yml: default_instance_type: "b" is not one of instance_types (line 5)`},
	{"kube supervisor both", kubeOK + "supervisor: {image: hangar:1, host_path: /opt/hangar}\n", "compute.yml: supervisor.host_path: give image or host_path, not both (line 3)"},
	{"kube supervisor relative", kubeOK + "supervisor: {host_path: opt/hangar}\n", `compute.yml: supervisor.host_path: expected an absolute directory path on the nodes, got "opt/hangar" (line 3)`},
	{"kube server url", kubeOK + "server_url: hangar:8080\n", `compute.yml: server_url: expected an http:// or https:// URL the pods reach the server at, got "hangar:8080" (line 3)`},
	{"kube toleration operator", kubeOK + "instance_types:\n  a:\n    tolerations: [{key: k, operator: Maybe}]\n", `compute.yml: instance_types.a.tolerations[0].operator: expected one of Equal, Exists, got "Maybe" (line 5)`},
	{"kube toleration exists value", kubeOK + "instance_types:\n  a:\n    tolerations: [{key: k, operator: Exists, value: v}]\n", "compute.yml: instance_types.a.tolerations[0].value: must be empty when operator is Exists (line 5)"},
	{"kube pod label", kubeOK + "pod_labels: {team: 'a b'}\n", "compute.yml: pod_labels.team: expected a Kubernetes label (a key like example.com/name, a value of letters, digits, -, _ and ., at most 63) (line 3)"},
	{"kube queue name", kubeOK + "queue_name: 'team a'\n", `compute.yml: queue_name: expected a Kueue LocalQueue name (letters, digits, -, _ and ., at most 63), got "team a" (line 3)`},
	// local
	{"local runtime", "name: local\ntype: local\ncontainer_runtime: lxc\n", `compute.yml: container_runtime: expected one of docker, podman, auto, got "lxc" (line 3)`},
	{"local max runs", "name: local\ntype: local\nmax_concurrent_runs: -1\n", "compute.yml: max_concurrent_runs: expected integer >= 0, got -1 (line 3)"},
	{"local has no size", "name: local\ntype: local\nsize: big\n", "compute.yml: size: unknown field (line 3)"},
}

// TestParseComputeAllErrors: every problem in a file is reported at once, in line order.
func TestParseComputeAllErrors(t *testing.T) {
	_, _, _, err := parseComputeT(t, `name: 9lives
type: cluster
tier: spot
min_instances: 3
max_instances: 2
provider: {type: command, create: x}
`)
	checkErr(t, err)
	want := `compute.yml: name: expected a name of 2 to 32 letters, digits and -, starting with a letter, got "9lives" (line 1)
compute.yml: tier: expected one of dedicated, low_priority, got "spot" (line 3)
compute.yml: min_instances: expected at most max_instances (2), got 3 (line 4)
compute.yml: provider.delete: required (line 6)`
	diff(t, err.Error(), want)
}
