package spec

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/compute"
)

const (
	setPool = "name: pool\ntype: amlcompute\nmin_instances: 0\nmax_instances: 2\ntier: dedicated\n"
	setVM   = "name: vm1\ntype: ssh\naddress: h\nssh_settings:\n  admin_username: u\n  admin_password: p\n  ssh_port: 22\n"
)

func TestComputeSetValid(t *testing.T) {
	tests := []struct {
		name  string
		yml   string
		sets  []string
		check func(s *compute.Spec) any
		want  any
	}{
		{"replace max_instances", setPool, []string{"max_instances=4"}, func(s *compute.Spec) any { return s.Cluster.MaxInstances }, 4},
		{"enum any case", setPool, []string{"tier=LowPriority"}, func(s *compute.Spec) any { return s.Cluster.Tier }, "low_priority"},
		{"create idle time", setPool, []string{"idle_time_before_scale_down=PT10M"}, func(s *compute.Spec) any { return s.Cluster.IdleTimeBeforeScaleDown }, int64(600)},
		{"create tags", setPool, []string{"tags.team=ml", "tags.n=1"}, func(s *compute.Spec) any { return s.Tags }, map[string]string{"team": "ml", "n": "1"}},
		{"create provider", setPool, []string{"provider.type=command", "provider.create=make", "provider.delete=drop", "provider.env.A=1"},
			func(s *compute.Spec) any { return s.Cluster.Provider },
			compute.Provider{Type: "command", Create: "make", Delete: "drop", Timeout: 600, Env: map[string]string{"A": "1"}}},
		{"change type", setPool, []string{"type=cluster"}, func(s *compute.Spec) any { return s.Type }, "cluster"},
		{"replace ssh port", setVM, []string{"ssh_settings.ssh_port=2222"}, func(s *compute.Spec) any { return s.SSH.Port }, 2222},
		{"replace address", setVM, []string{"address=10.0.0.9:2022", "ssh_settings.ssh_port=2022"}, func(s *compute.Spec) any { return s.SSH.Address() }, "10.0.0.9:2022"},
		{"create host key", setVM, []string{"host_key=" + testPubKey}, func(s *compute.Spec) any { return s.SSH.HostKey }, testPubKey},
		{"create slurm login", "name: hpc\ntype: slurm\n", []string{"login.address=login1", "login.ssh_settings.admin_username=u", "login.ssh_settings.admin_password=p"},
			func(s *compute.Spec) any { return s.Slurm.Login.Address() }, "login1:22"},
		{"create slurm size", "name: hpc\ntype: slurm\n", []string{"size_map.small.mem=8G", "size_map.small.cpus_per_task=2"},
			func(s *compute.Spec) any { return s.Slurm.SizeMap }, map[string]compute.SlurmSize{"small": {CPUsPerTask: 2, Mem: "8G"}}},
		{"replace kube requests with a flow mapping", "name: k8s\ntype: kubernetes\ninstance_types:\n  gpu:\n    requests: {cpu: 1}\n",
			[]string{"instance_types.gpu.requests={cpu: 2, nvidia.com/gpu: 1}"},
			func(s *compute.Spec) any { return s.Kubernetes.InstanceTypes["gpu"].Requests }, compute.ResourceList{CPU: "2", GPU: 1}},
		{"empty file", "", []string{"name=c1", "type=local", "max_concurrent_runs=3"}, func(s *compute.Spec) any { return s.Local.MaxConcurrentRuns }, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _, err := parseComputeT(t, tt.yml, tt.sets...)
			if err != nil {
				t.Fatalf("unexpected error:\n%v", err)
			}
			diff(t, tt.check(s), tt.want)
		})
	}
}

func TestComputeSetErrors(t *testing.T) {
	tests := []struct {
		name string
		yml  string
		set  string
		want string
	}{
		{"integer replaced by text", setVM, "ssh_settings.ssh_port=abc", `compute.yml: ssh_settings.ssh_port: expected integer, got "abc" (from --set)`},
		{"integer created from text", "name: vm1\ntype: ssh\naddress: h\nssh_settings: {admin_username: u, admin_password: p}\n", "ssh_settings.ssh_port=abc",
			`compute.yml: ssh_settings.ssh_port: expected integer, got "abc" (from --set)`},
		{"port out of range", setVM, "ssh_settings.ssh_port=0", "compute.yml: ssh_settings.ssh_port: expected integer >= 1, got 0 (from --set)"},
		{"min above max", setPool, "min_instances=5", "compute.yml: min_instances: expected at most max_instances (2), got 5 (from --set)"},
		{"max below min", "name: pool\ntype: cluster\nmin_instances: 3\nmax_instances: 4\n", "max_instances=2", "compute.yml: min_instances: expected at most max_instances (2), got 3 (line 3)"},
		{"bad enum", setPool, "tier=spot", `compute.yml: tier: expected one of dedicated, low_priority, got "spot" (from --set)`},
		{"no such key", setPool, "max_instancez=3", `compute.yml: --set max_instancez: no such key; did you mean "max_instances"?`},
		{"key of another kind", setPool, "partition=gpu", "compute.yml: partition: unknown field (from --set)"},
		{"no equals", setPool, "max_instances", "compute.yml: --set max_instances: expected key.path=value"},
		{"not a mapping", setVM, "address.host=x", "compute.yml: --set address.host: address is not a mapping"},
		{"unknown type", setPool, "type=mainframe", `compute.yml: type: expected one of local, amlcompute, cluster, computeinstance, instance, virtualmachine, ssh, slurm, kubernetes, serverless, synapsespark, got "mainframe" (from --set)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := parseComputeT(t, tt.yml, tt.set)
			checkErr(t, err, tt.want)
		})
	}
}
