package spec

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

const (
	testPubKey  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA0rkGUTNpz88VC97dl0RvSWQBJGjA1kTN4Ly28xYLAQ test"
	testPrivKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nZmFrZSBrZXkgZm9yIHRlc3Rz\n-----END OPENSSH PRIVATE KEY-----\n"
)

// computeFiles is the tree compute specs are parsed in; HOME points at its root.
var computeFiles = map[string]string{
	".ssh/id_rsa": testPrivKey, "keys/id": testPrivKey, "keys/id.pub": testPubKey + "\n", "keys/junk": "hello\n",
	"known_hosts": "gpu1 " + testPubKey + "\n", "kube/config": "apiVersion: v1\n", "slurm.conf": "ClusterName=x\n",
	"scripts/create.sh": "#!/bin/sh\n", "scripts/delete.sh": "#!/bin/sh\n", "dir/": "",
}

// parseComputeT parses yml as "compute.yml" in a tree holding computeFiles, with HOME
// set to the tree.
func parseComputeT(t *testing.T, yml string, sets ...string) (*compute.Spec, []string, string, error) {
	t.Helper()
	dir := writeTree(t, computeFiles)
	t.Setenv("HOME", dir)
	s, warnings, err := ParseCompute("compute.yml", []byte(yml), dir, sets)
	return s, warnings, dir, err
}

// defaultCluster is a cluster spec with every default.
func defaultCluster(mod func(c *compute.ClusterSpec)) *compute.ClusterSpec {
	c := &compute.ClusterSpec{
		Size: "Standard_DS3_v2", Tier: "dedicated", MaxInstances: 1, IdleTimeBeforeScaleDown: 120,
		EnableNodePublicIP: true, Provider: compute.Provider{Type: "local"}, MaxProvisionRetries: 3, ProvisionTimeout: 900,
	}
	if mod != nil {
		mod(c)
	}
	return c
}

func sshHost(mod func(h *compute.SSHHost)) compute.SSHHost {
	h := compute.SSHHost{Port: 22, WorkDir: "~/.hangar"}
	mod(&h)
	return h
}

func TestParseComputeValid(t *testing.T) {
	tests := []struct {
		name     string
		yml      string
		sets     []string
		want     compute.Spec
		warnings []string
	}{
		{
			name: "azure amlcompute example (SPEC 1.1)",
			yml: `$schema: https://azuremlschemas.azureedge.net/latest/amlCompute.schema.json
name: cpu-pool
type: amlcompute
size: Standard_D4s_v3
min_instances: 0
max_instances: 4
idle_time_before_scale_down: 300
tier: low_priority
`,
			want: compute.Spec{Name: "cpu-pool", Type: "cluster", Cluster: defaultCluster(func(c *compute.ClusterSpec) {
				c.Size, c.MaxInstances, c.IdleTimeBeforeScaleDown, c.Tier = "Standard_D4s_v3", 4, 300, "low_priority"
			})},
		},
		{
			name: "cluster defaults",
			yml:  "name: c1\ntype: cluster\n",
			want: compute.Spec{Name: "c1", Type: "cluster", Cluster: defaultCluster(nil)},
		},
		{
			name: "cluster with every field and a command provider",
			yml: `name: gpu-pool
type: AmlCompute
description: A100 nodes
location: westeurope
tags: {team: ml, cost: 3}
size: Standard_NC24ads_A100_v4
tier: LowPriority
min_instances: 1
max_instances: 8
idle_time_before_scale_down: PT5M
ssh_public_access_enabled: true
ssh_settings:
  admin_username: azureuser
  ssh_key_value: ` + testPubKey + `
network_settings: {vnet_name: vnet, subnet: default}
enable_node_public_ip: false
identity:
  type: UserAssigned
  user_assigned_identities:
    - resource_id: /subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u
provider:
  type: command
  create: ./scripts/create.sh --gpu a100
  delete: az vm delete --yes --name "$HANGAR_NODE"
  timeout: PT10M
  env: {RESOURCE_GROUP: ml, ZONES: 3}
max_provision_retries: 5
provision_timeout: 1200
`,
			want: compute.Spec{
				Name: "gpu-pool", Type: "cluster", Description: "A100 nodes", Location: "westeurope",
				Tags: map[string]string{"team": "ml", "cost": "3"},
				Identity: map[string]any{"type": "user_assigned", "user_assigned_identities": []any{
					map[string]any{"resource_id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u"}}},
				Cluster: &compute.ClusterSpec{
					Size: "Standard_NC24ads_A100_v4", Tier: "low_priority", MinInstances: 1, MaxInstances: 8,
					IdleTimeBeforeScaleDown: 300, SSHPublicAccessEnabled: true,
					SSHSettings:     &compute.SSHSettings{AdminUsername: "azureuser", SSHKeyValue: testPubKey},
					NetworkSettings: &compute.NetworkSettings{VNetName: "vnet", Subnet: "default"},
					Provider: compute.Provider{Type: "command", Create: "$DIR/scripts/create.sh --gpu a100",
						Delete: `az vm delete --yes --name "$HANGAR_NODE"`, Timeout: 600,
						Env: map[string]string{"RESOURCE_GROUP": "ml", "ZONES": "3"}},
					MaxProvisionRetries: 5, ProvisionTimeout: 1200,
				},
			},
		},
		{
			name: "provider scalar, zero idle time, min equals max",
			yml:  "name: c1\ntype: cluster\nprovider: Local\nidle_time_before_scale_down: 0\nmin_instances: 2\nmax_instances: 2\n",
			want: compute.Spec{Name: "c1", Type: "cluster", Cluster: defaultCluster(func(c *compute.ClusterSpec) {
				c.IdleTimeBeforeScaleDown, c.MinInstances, c.MaxInstances = 0, 2, 2
			})},
		},
		{
			name: "command provider defaults its timeout",
			yml:  "name: c1\ntype: cluster\nprovider: {type: command, create: make-node, delete: scripts/delete.sh $NODE}\n",
			want: compute.Spec{Name: "c1", Type: "cluster", Cluster: defaultCluster(func(c *compute.ClusterSpec) {
				c.Provider = compute.Provider{Type: "command", Create: "make-node", Delete: "$DIR/scripts/delete.sh $NODE", Timeout: 600}
			})},
		},
		{
			name: "read-only fields are ignored with a warning",
			yml:  "name: c1\ntype: cluster\nid: /subscriptions/x\nprovisioning_state: Succeeded\ncreated_on: 2024-01-01\n",
			want: compute.Spec{Name: "c1", Type: "cluster", Cluster: defaultCluster(nil)},
			warnings: []string{
				"compute.yml: id: read-only field ignored (line 3)",
				"compute.yml: provisioning_state: read-only field ignored (line 4)",
				"compute.yml: created_on: read-only field ignored (line 5)",
			},
		},
		{
			name: "azure compute instance",
			yml: `$schema: https://azuremlschemas.azureedge.net/latest/computeInstance.schema.json
name: dev-box
type: computeinstance
size: STANDARD_DS3_V2
idle_time_before_shutdown_minutes: 30
ssh_public_access_enabled: true
ssh_settings:
  ssh_key_value: ` + testPubKey + `
create_on_behalf_of: {user_tenant_id: t, user_object_id: o}
identity: {type: system_assigned}
schedules:
  compute_start_stop:
    - action: stop
      trigger: {type: cron, expression: "0 18 * * *"}
setup_scripts:
  creation_script: {path: scripts/create.sh, command: "--quiet 'a b'", timeout_minutes: 5}
custom_applications:
  - name: rstudio
    type: docker
    endpoints: [{target: 8787, published: 8787}]
`,
			want: compute.Spec{Name: "dev-box", Type: "instance", Identity: map[string]any{"type": "system_assigned"},
				Instance: &compute.InstanceSpec{
					Size: "STANDARD_DS3_V2", IdleTimeBeforeShutdownMinutes: 30, SSHPublicAccessEnabled: true,
					SSHSettings: &compute.SSHSettings{SSHKeyValue: testPubKey}, EnableNodePublicIP: true,
					CreateOnBehalfOf: map[string]string{"user_tenant_id": "t", "user_object_id": "o"},
					Schedules: &compute.Schedules{ComputeStartStop: []compute.StartStopSchedule{{Action: "stop", State: "enabled",
						Trigger: compute.ScheduleTrigger{Type: "cron", Expression: "0 18 * * *"}, Cron: "0 18 * * *"}}},
					SetupScripts: &compute.SetupScripts{CreationScript: &compute.SetupScript{Path: "scripts/create.sh",
						Args: []string{"--quiet", "a b"}, TimeoutMinutes: 5, Content: "#!/bin/sh\n"}},
					Provider: compute.Provider{Type: compute.ProviderLocal},
					CustomApplications: []any{map[string]any{"name": "rstudio", "type": "docker",
						"endpoints": []any{map[string]any{"target": float64(8787), "published": float64(8787)}}}},
				}},
		},
		{
			name: "instance iso idle alias",
			yml:  "name: ci1\ntype: instance\nidle_time_before_shutdown: PT45M\n",
			want: compute.Spec{Name: "ci1", Type: "instance", Instance: &compute.InstanceSpec{
				Size: "Standard_DS3_v2", IdleTimeBeforeShutdownMinutes: 45, EnableNodePublicIP: true,
				Provider: compute.Provider{Type: compute.ProviderLocal}}},
		},
		{
			name: "instance minutes win over the alias",
			yml:  "name: ci1\ntype: instance\nidle_time_before_shutdown: PT45M\nidle_time_before_shutdown_minutes: 60\n",
			want: compute.Spec{Name: "ci1", Type: "instance", Instance: &compute.InstanceSpec{
				Size: "Standard_DS3_v2", IdleTimeBeforeShutdownMinutes: 60, EnableNodePublicIP: true,
				Provider: compute.Provider{Type: compute.ProviderLocal}}},
			warnings: []string{"compute.yml: idle_time_before_shutdown: ignored: idle_time_before_shutdown_minutes is set (line 3)"},
		},
		{
			name: "azure virtualmachine example (SPEC 1.4)",
			yml: `name: gpu-box
type: virtualmachine
resource_id: /subscriptions/.../virtualMachines/gpu-box
ssh_settings:
  admin_username: mluser
  ssh_private_key_file: ~/.ssh/id_rsa
  ssh_port: 22
`,
			want: compute.Spec{Name: "gpu-box", Type: "ssh", ResourceID: "/subscriptions/.../virtualMachines/gpu-box",
				SSH: &compute.SSHSpec{SSHHost: sshHost(func(h *compute.SSHHost) {
					h.Host, h.AdminUsername, h.PrivateKeyFile, h.PrivateKey = "gpu-box", "mluser", "$DIR/.ssh/id_rsa", testPrivKey
				})}},
			warnings: []string{`compute.yml: resource_id: an Azure resource id: connecting to its last segment "gpu-box" as the host (give address: to choose) (line 3)`},
		},
		{
			name: "ssh with address, password and pinned host key",
			yml: `name: lab1
type: ssh
address: gpu1.lab:2222
ssh_settings: {admin_username: ml, admin_password: secret}
host_key: ` + testPubKey + `
work_dir: /srv/hangar
require_container: true
`,
			want: compute.Spec{Name: "lab1", Type: "ssh", SSH: &compute.SSHSpec{RequireContainer: true,
				SSHHost: sshHost(func(h *compute.SSHHost) {
					h.Host, h.Port, h.AdminUsername, h.AdminPassword, h.HostKey, h.WorkDir = "gpu1.lab", 2222, "ml", "secret", testPubKey, "/srv/hangar"
				})}},
		},
		{
			name: "ssh with a plain host resource_id, relative key, known_hosts",
			yml:  "name: lab2\ntype: ssh\nresource_id: 10.0.0.5\nssh_settings: {admin_username: ml, ssh_private_key_file: keys/id, ssh_port: 2200}\nknown_hosts: ./known_hosts\n",
			want: compute.Spec{Name: "lab2", Type: "ssh", ResourceID: "10.0.0.5", SSH: &compute.SSHSpec{
				SSHHost: sshHost(func(h *compute.SSHHost) {
					h.Host, h.Port, h.AdminUsername, h.PrivateKeyFile, h.PrivateKey, h.KnownHosts = "10.0.0.5", 2200, "ml", "$DIR/keys/id", testPrivKey, "$DIR/known_hosts"
				})}},
		},
		{
			name: "ssh ipv6 address with the same port in ssh_settings",
			yml:  "name: lab3\ntype: ssh\naddress: '[2001:db8::1]:2222'\nssh_settings: {admin_username: ml, admin_password: p, ssh_port: 2222}\n",
			want: compute.Spec{Name: "lab3", Type: "ssh", SSH: &compute.SSHSpec{SSHHost: sshHost(func(h *compute.SSHHost) {
				h.Host, h.Port, h.AdminUsername, h.AdminPassword = "2001:db8::1", 2222, "ml", "p"
			})}},
		},
		{
			name: "slurm without a login host",
			yml:  "name: hpc\ntype: slurm\ntime_limit: 90\nslurm_conf: slurm.conf\n",
			want: compute.Spec{Name: "hpc", Type: "slurm", Slurm: &compute.SlurmSpec{TimeLimitSeconds: 5400, SlurmConf: "$DIR/slurm.conf"}},
		},
		{
			name: "slurm with every field",
			yml: `name: hpc
type: slurm
partition: gpu
account: ml-team
qos: normal
login:
  address: login.hpc.example.org
  ssh_settings: {admin_username: alice, ssh_private_key_file: keys/id}
  known_hosts: known_hosts
  work_dir: /scratch/alice/hangar
max_nodes: 8
time_limit: "1:00:00"
sbatch_args: [--constraint=a100, --exclusive]
size_map:
  gpu-small: {cpus_per_task: 8, mem: 64g, gres: "gpu:1"}
  gpu-large: {cpus_per_task: 32, mem: 256G, gres: "gpu:a100:4"}
priority_map:
  Low: {nice: 100}
  high: {qos: high, nice: -10}
slurm_conf: /etc/slurm/slurm.conf
`,
			want: compute.Spec{Name: "hpc", Type: "slurm", Slurm: &compute.SlurmSpec{
				Partition: "gpu", Account: "ml-team", QOS: "normal",
				Login: &compute.SSHHost{Host: "login.hpc.example.org", Port: 22, AdminUsername: "alice",
					PrivateKeyFile: "$DIR/keys/id", PrivateKey: testPrivKey, KnownHosts: "$DIR/known_hosts", WorkDir: "/scratch/alice/hangar"},
				MaxNodes: 8, TimeLimitSeconds: 3600, SbatchArgs: []string{"--constraint=a100", "--exclusive"},
				SizeMap: map[string]compute.SlurmSize{
					"gpu-small": {CPUsPerTask: 8, Mem: "64G", Gres: "gpu:1"},
					"gpu-large": {CPUsPerTask: 32, Mem: "256G", Gres: "gpu:a100:4"},
				},
				PriorityMap: map[string]compute.SlurmPriority{"low": {Nice: 100}, "high": {QOS: "high", Nice: -10}},
				SlurmConf:   "/etc/slurm/slurm.conf",
			}},
		},
		{
			name: "slurm day time limit",
			yml:  "name: hpc\ntype: slurm\ntime_limit: 2-12\n",
			want: compute.Spec{Name: "hpc", Type: "slurm", Slurm: &compute.SlurmSpec{TimeLimitSeconds: 2*86400 + 12*3600}},
		},
		{
			name: "azure kubernetes attach (SPEC 1.3)",
			yml: `$schema: https://azuremlschemas.azureedge.net/latest/kubernetesCompute.schema.json
name: k8s-compute
type: kubernetes
resource_id: /subscriptions/s/resourceGroups/g/providers/Microsoft.Kubernetes/connectedClusters/c
namespace: azureml
identity: {type: SystemAssigned}
properties: {anything: [1, two]}
`,
			want: compute.Spec{Name: "k8s-compute", Type: "kubernetes",
				ResourceID: "/subscriptions/s/resourceGroups/g/providers/Microsoft.Kubernetes/connectedClusters/c",
				Identity:   map[string]any{"type": "system_assigned"},
				Kubernetes: &compute.KubernetesSpec{Namespace: "azureml", Properties: map[string]any{"anything": []any{float64(1), "two"}}}},
		},
		{
			name: "kubernetes with kubeconfig and instance types",
			yml: `name: kind
type: kubernetes
kubeconfig: ~/kube/config
context: kind-hangar
instance_types:
  defaultinstancetype:
    requests: {cpu: 100m, memory: 2Gi}
    limits: {cpu: 2, memory: 2Gi}
  gpu:
    node_selector: {accelerator: a100}
    requests: {cpu: 4, memory: 16Gi, nvidia.com/gpu: 1}
    limits: {cpu: "8", memory: 32Gi, nvidia.com/gpu: 1}
`,
			want: compute.Spec{Name: "kind", Type: "kubernetes", Kubernetes: &compute.KubernetesSpec{
				Namespace: "default", Kubeconfig: "$DIR/kube/config", Context: "kind-hangar",
				InstanceTypes: map[string]compute.InstanceType{
					"defaultinstancetype": {Requests: compute.ResourceList{CPU: "100m", Memory: "2Gi"}, Limits: compute.ResourceList{CPU: "2", Memory: "2Gi"}},
					"gpu": {NodeSelector: map[string]string{"accelerator": "a100"},
						Requests: compute.ResourceList{CPU: "4", Memory: "16Gi", GPU: 1}, Limits: compute.ResourceList{CPU: "8", Memory: "32Gi", GPU: 1}},
				},
			}},
		},
		{
			name: "kubernetes with Hangar's settings for its Jobs",
			yml: `name: k8s
type: kubernetes
namespace: ml
default_image: python:3.12-slim
default_instance_type: gpu
supervisor: {image: registry.example/hangar:1.4}
server_url: https://hangar.example:8443
host_network: false
queue_name: team-a
pod_labels: {cost-center: ml-42}
pod_annotations: {sidecar.istio.io/inject: "false"}
instance_types:
  gpu:
    requests: {nvidia.com/gpu: 1}
    limits: {nvidia.com/gpu: 1}
    tolerations:
    - {key: nvidia.com/gpu, operator: exists, effect: NoSchedule}
    - {key: pool, operator: Equal, value: a100}
`,
			want: compute.Spec{Name: "k8s", Type: "kubernetes", Kubernetes: &compute.KubernetesSpec{
				Namespace: "ml", DefaultImage: "python:3.12-slim", DefaultInstanceType: "gpu",
				Supervisor: compute.KubeSupervisor{Image: "registry.example/hangar:1.4"}, ServerURL: "https://hangar.example:8443",
				QueueName: "team-a", PodLabels: map[string]string{"cost-center": "ml-42"},
				PodAnnotations: map[string]string{"sidecar.istio.io/inject": "false"},
				InstanceTypes: map[string]compute.InstanceType{"gpu": {
					Requests: compute.ResourceList{GPU: 1}, Limits: compute.ResourceList{GPU: 1},
					Tolerations: []compute.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"},
						{Key: "pool", Operator: "Equal", Value: "a100"}},
				}},
			}},
		},
		{
			name: "the built-in local target reconfigured",
			yml:  "name: local\ntype: Local\nrequire_container: true\nmax_concurrent_runs: 2\ncontainer_runtime: Podman\n",
			want: compute.Spec{Name: "local", Type: "local", Local: &compute.LocalSpec{RequireContainer: true, MaxConcurrentRuns: 2, ContainerRuntime: "podman"}},
		},
		{
			name: "local with automatic runtime",
			yml:  "name: local-2\ntype: local\ncontainer_runtime: auto\n",
			want: compute.Spec{Name: "local-2", Type: "local", Local: &compute.LocalSpec{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, warnings, dir, err := parseComputeT(t, tt.yml, tt.sets...)
			if err != nil {
				t.Fatalf("unexpected error:\n%v", err)
			}
			diff(t, *normalize(t, s, dir), tt.want)
			diff(t, warnings, tt.warnings)
		})
	}
}

func TestParseComputeFile(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"infra/vm.yml": "name: vm1\ntype: ssh\naddress: h\nssh_settings: {admin_username: u, ssh_private_key_file: id}\n",
		"infra/id":     testPrivKey,
	})
	s, _, err := ParseComputeFile(filepath.Join(dir, "infra", "vm.yml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, s.SSH.PrivateKeyFile, filepath.Join(dir, "infra", "id"))
	_, _, err = ParseComputeFile(filepath.Join(dir, "missing.yml"), nil)
	checkErr(t, err, "missing.yml: read: no such file or directory")
}

// TestComputeTarget: a spec round-trips through a Target's Properties, and Redacted
// hides every secret.
func TestComputeTarget(t *testing.T) {
	s, _, _, err := parseComputeT(t, "name: hpc\ntype: slurm\nlogin: {address: h, ssh_settings: {admin_username: u, admin_password: pw, ssh_private_key_file: keys/id}}\n")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, s.Secrets(), []string{"pw", testPrivKey})
	r := s.Redacted()
	diff(t, r.Secrets(), []string{"***", "***"})
	if s.Slurm.Login.AdminPassword != "pw" {
		t.Fatal("Redacted changed the original")
	}
	tg, err := s.Target(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, []string{tg.Name, tg.Type}, []string{"hpc", "slurm"})
	if !contains(string(tg.Properties), `"login":{"host":"h","port":22`) {
		t.Errorf("properties: %s", tg.Properties)
	}
}
