package instances

import (
	"context"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
)

// SSH on compute instances, as Jupyter (jupyter.go): while an instance with
// ssh_public_access_enabled runs, the instances owner asks its agent for an SSH server admitting
// ssh_settings.ssh_key_value (Services, in the heartbeat's reply); the agent reports its
// address and host key in its activity report (stored with the instance's signals); the server
// pipes an upgraded connection to it (SSHEndpoint), and compute show gives the host key to pin.

// sshKeys are the public keys an instance's SSH server admits, "" when SSH access is off.
func sshKeys(spec *compute.InstanceSpec) string {
	if !spec.SSHPublicAccessEnabled || spec.SSHSettings == nil {
		return ""
	}
	return spec.SSHSettings.SSHKeyValue
}

// SSHTarget is where an instance's SSH server listens, with its host key and the instance's owner.
type SSHTarget struct {
	Addr, HostKey, Owner string
}

// SSHEndpoint is the running SSH server of instance name, or a conflict saying why there is
// none; with a conflict, the target still names the owner (who may be told why).
func (m *Manager) SSHEndpoint(ctx context.Context, name string) (*SSHTarget, error) {
	v, err := m.readInstance(ctx, name)
	if err != nil {
		return nil, err
	}
	status, ok := sshStatus(name, sshKeys(v.spec) != "", v.state, v.node, v.sig, m.now())
	if !ok {
		return &SSHTarget{Owner: v.spec.Owner}, conflictf("compute instance %s has no SSH server to connect to: %s", name, status)
	}
	return &SSHTarget{Addr: v.sig.SSH.Addr, HostKey: v.sig.SSH.HostKey, Owner: v.spec.Owner}, nil
}

// sshStatus says how an instance's SSH server is, for compute show, and whether it can be
// connected to. Like Jupyter's, a report counts only from the instance's current node, and only
// while recent.
func sshStatus(name string, enabled bool, state instance.State, node string, sig signalsRecord, now time.Time) (status string, ok bool) {
	s := sig.SSH
	switch {
	case !enabled:
		return "not enabled: set ssh_public_access_enabled: true and ssh_settings.ssh_key_value (your public key) in the instance's YAML", false
	case state != instance.Running:
		return fmt.Sprintf("not running: the instance is %s (SSH runs while it is Running)", state), false
	case s == nil || sig.Node != node || node == "" || now.Sub(sig.ReportedAt) > jupyterStale:
		return "starting: its node has not reported its SSH server yet", false
	case s.State == api.SSHRunning && s.Addr != "" && s.HostKey != "":
		return "running: hangar compute connect-ssh " + name, true
	case s.State == api.SSHFailed:
		return "failed: " + s.Reason + " (the agent starts it again)", false
	}
	return "starting", false
}

// instanceSSH is compute show's SSH line and the host key to pin ("" none).
func instanceSSH(name string, spec *compute.InstanceSpec, state instance.State, node string, sig signalsRecord, now time.Time) (status, hostKey string) {
	status, ok := sshStatus(name, sshKeys(spec) != "", state, node, sig, now)
	if ok {
		hostKey = sig.SSH.HostKey
	}
	return status, hostKey
}
