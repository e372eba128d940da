package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// az's field flags become --set overrides of the resource's YAML, in the fields' order.
func TestFlagFieldsSets(t *testing.T) {
	tests := []struct {
		args string
		want []string
		err  string
	}{
		{"--type amlcompute --max-instances 4 --min-instances 0", []string{`type="amlcompute"`, "min_instances=0", "max_instances=4"}, ""},
		{"--description 123", []string{`description="123"`}, ""}, // a string stays a string
		{"--description a:b", []string{`description="a:b"`}, ""}, // never a mapping
		{"--ssh-public-access-enabled True", []string{"ssh_public_access_enabled=true"}, ""},
		{"--admin-username rita", []string{`ssh_settings.admin_username="rita"`}, ""},
		{"--max-instances four", nil, `--max-instances: expected an integer, got "four"`},
		{"--enable-node-public-ip maybe", nil, `--enable-node-public-ip: expected true or false, got "maybe"`},
		{"", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			cmd := &cobra.Command{Use: "create", RunE: func(*cobra.Command, []string) error { return nil }}
			ff := addFlagFields(cmd, computeCreateFields)
			if err := cmd.ParseFlags(strings.Fields(tt.args)); err != nil {
				t.Fatal(err)
			}
			got, err := ff.sets()
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sets (-want +got):\n%s", diff)
			}
			if ff.given() != (tt.args != "") {
				t.Errorf("given() = %v for %q", ff.given(), tt.args)
			}
		})
	}
	list := flagField{flag: "user-assigned-identities", field: "identity.user_assigned_identities", listItemKey: "resource_id"}
	if got, _ := list.setValue("/a, /b"); got != `[{resource_id: "/a"}, {resource_id: "/b"}]` {
		t.Errorf("a list flag's value: %s", got)
	}
}

// compute create with az's flags and no file is the target a file with those fields makes.
func TestComputeSpecFromFlags(t *testing.T) {
	env := &Env{Stderr: &strings.Builder{}}
	s, err := computeSpecFromFlags(env, "create", "", "cpu-cluster",
		[]string{`type="amlcompute"`, "min_instances=0", "max_instances=5", `size="Standard_DS3_v2"`, "idle_time_before_scale_down=300", `tier="low_priority"`}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "cpu-cluster" || s.Cluster == nil || s.Cluster.MaxInstances != 5 || s.Cluster.Size != "Standard_DS3_v2" ||
		s.Cluster.IdleTimeBeforeScaleDown != 300 || s.Cluster.Tier != "low_priority" {
		t.Errorf("spec %+v, cluster %+v", s, s.Cluster)
	}
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"", []string{`type="amlcompute"`}, "give --file (-f), or --name and --type"},
		{"cpu", []string{"max_instances=2"}, "give --file (-f), or --name and --type"},
		{"cpu", []string{`type="amlcompute"`, "min_instances=3", "max_instances=2"}, "command line: "},
		{"cpu", []string{`type="gpu-farm"`}, "command line: type: "},
	} {
		if _, err := computeSpecFromFlags(env, "create", "", tt.name, tt.flags, nil, ""); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: error %v, want one containing %q", tt.name, tt.flags, err, tt.want)
		}
	}
}
