package instances

import (
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
)

func TestInstanceSSH(t *testing.T) {
	now := time.Unix(10000, 0)
	report := func(node string, at time.Time, s *api.SSHReport) signalsRecord {
		return signalsRecord{NodeActivity: api.NodeActivity{SSH: s}, ReportedAt: at, Node: node}
	}
	on := &compute.InstanceSpec{SSHPublicAccessEnabled: true, SSHSettings: &compute.SSHSettings{SSHKeyValue: "ssh-ed25519 AAAAuser u@x"}}
	off := &compute.InstanceSpec{SSHSettings: &compute.SSHSettings{SSHKeyValue: "ssh-ed25519 AAAAuser u@x"}}
	running := &api.SSHReport{State: api.SSHRunning, Addr: "10.0.0.5:40022", HostKey: "ssh-ed25519 AAAAhost"}
	cases := []struct {
		name        string
		spec        *compute.InstanceSpec
		state       instance.State
		node        string
		sig         signalsRecord
		wantStatus  string // prefix
		wantHostKey string
	}{
		{"running", on, instance.Running, "n1", report("n1", now, running), "running: hangar compute connect-ssh dev", running.HostKey},
		{"access off", off, instance.Running, "n1", report("n1", now, running), "not enabled: set ssh_public_access_enabled: true and ssh_settings.ssh_key_value", ""},
		{"no settings", &compute.InstanceSpec{SSHPublicAccessEnabled: true}, instance.Running, "n1", report("n1", now, running), "not enabled", ""},
		{"stopped, with an old report", on, instance.Stopped, "", report("n1", now, running), "not running: the instance is Stopped", ""},
		{"the report is an earlier node's", on, instance.Running, "n2", report("n1", now, running), "starting: its node has not reported", ""},
		{"stale report", on, instance.Running, "n1", report("n1", now.Add(-3*time.Minute), running), "starting: its node has not reported", ""},
		{"no report yet", on, instance.Running, "n1", report("n1", now, nil), "starting: its node has not reported", ""},
		{"failed", on, instance.Running, "n1", report("n1", now, &api.SSHReport{State: api.SSHFailed, Reason: "ssh sessions' sandbox: bwrap missing"}),
			"failed: ssh sessions' sandbox: bwrap missing (the agent starts it again)", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, key := instanceSSH("dev", c.spec, c.state, c.node, c.sig, now)
			if !strings.HasPrefix(status, c.wantStatus) || key != c.wantHostKey {
				t.Errorf("got %q, %q; want %q…, %q", status, key, c.wantStatus, c.wantHostKey)
			}
		})
	}
}

func TestSSHKeys(t *testing.T) {
	key := "ssh-ed25519 AAAAuser u@x"
	for _, c := range []struct {
		spec compute.InstanceSpec
		want string
	}{
		{compute.InstanceSpec{SSHPublicAccessEnabled: true, SSHSettings: &compute.SSHSettings{SSHKeyValue: key}}, key},
		{compute.InstanceSpec{SSHSettings: &compute.SSHSettings{SSHKeyValue: key}}, ""},
		{compute.InstanceSpec{SSHPublicAccessEnabled: true}, ""},
	} {
		if got := sshKeys(&c.spec); got != c.want {
			t.Errorf("sshKeys(%+v) = %q, want %q", c.spec, got, c.want)
		}
	}
}
