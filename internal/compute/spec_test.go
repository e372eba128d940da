package compute

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func testSpec() *Spec {
	return &Spec{
		Name: "hpc", Type: TypeSlurm, Description: "d", Tags: map[string]string{"a": "b"},
		Slurm: &SlurmSpec{
			Partition: "gpu",
			Login: &SSHHost{Host: "login1", Port: 22, AdminUsername: "u", AdminPassword: "pw",
				PrivateKeyFile: "/k", PrivateKey: "KEY", WorkDir: DefaultWorkDir},
			SizeMap:     map[string]SlurmSize{"s": {CPUsPerTask: 2, Mem: "8G", Gres: "gpu:1"}},
			PriorityMap: map[string]SlurmPriority{"low": {Nice: 10}},
		},
	}
}

// TestSpecTarget: the spec round-trips through a Target's Properties.
func TestSpecTarget(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := testSpec()
	tg, err := s.Target(now)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Name != "hpc" || tg.Type != TypeSlurm || tg.Description != "d" || !tg.CreatedAt.Equal(now) {
		t.Fatalf("target %+v", tg)
	}
	var back Spec
	if err := json.Unmarshal(tg.Properties, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, s) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, *s)
	}
}

func TestSpecRedacted(t *testing.T) {
	tests := []struct {
		name string
		spec *Spec
		want []string
	}{
		{"slurm login", testSpec(), []string{"pw", "KEY"}},
		{"ssh", &Spec{Type: TypeSSH, SSH: &SSHSpec{SSHHost: SSHHost{AdminPassword: "pw"}}}, []string{"pw"}},
		{"cluster", &Spec{Type: TypeCluster, Cluster: &ClusterSpec{SSHSettings: &SSHSettings{AdminPassword: "pw", SSHKeyValue: "ssh-ed25519 A"}}}, []string{"pw"}},
		{"instance without secrets", &Spec{Type: TypeInstance, Instance: &InstanceSpec{SSHSettings: &SSHSettings{SSHKeyValue: "ssh-ed25519 A"}}}, nil},
		{"local", &Spec{Type: TypeLocal, Local: &LocalSpec{}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := json.Marshal(tt.spec)
			if got := tt.spec.Secrets(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Secrets() = %q, want %q", got, tt.want)
			}
			r := tt.spec.Redacted()
			for _, s := range r.Secrets() {
				if s != "***" {
					t.Fatalf("redacted spec still holds %q", s)
				}
			}
			if len(r.Secrets()) != len(tt.want) {
				t.Fatalf("redacted secrets %q", r.Secrets())
			}
			if after, _ := json.Marshal(tt.spec); string(after) != string(before) {
				t.Fatalf("Redacted changed the original:\n%s\n%s", before, after)
			}
		})
	}
}

func TestSSHHostAddress(t *testing.T) {
	for host, want := range map[string]string{"h": "h:2222", "10.0.0.1": "10.0.0.1:2222", "2001:db8::1": "[2001:db8::1]:2222"} {
		if got := (SSHHost{Host: host, Port: 2222}).Address(); got != want {
			t.Errorf("Address(%q) = %q, want %q", host, got, want)
		}
	}
}
