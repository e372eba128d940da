package server

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

func TestConfineServiceAddrs(t *testing.T) {
	for _, tc := range []struct {
		name, jupyter, ssh, remote string
		keepJupyter, keepSSH       bool
	}{
		{name: "the node's own address", jupyter: "10.0.0.7:8888", ssh: "10.0.0.7:2222", remote: "10.0.0.7:51234", keepJupyter: true, keepSSH: true},
		{name: "loopback agent", jupyter: "127.0.0.1:8888", ssh: "127.0.0.1:2222", remote: "127.0.0.1:40000", keepJupyter: true, keepSSH: true},
		{name: "IPv4-mapped remote", jupyter: "10.0.0.7:8888", remote: "[::ffff:10.0.0.7]:51234", keepJupyter: true},
		{name: "another machine", jupyter: "10.0.0.8:8888", ssh: "10.0.0.8:22", remote: "10.0.0.7:51234"},
		{name: "the server's own services from a remote node", jupyter: "127.0.0.1:5432", ssh: "127.0.0.1:55432", remote: "10.0.0.7:51234"},
		{name: "a name, not an address", jupyter: "db.internal:5432", remote: "10.0.0.7:51234"},
		{name: "no port", ssh: "10.0.0.7", remote: "10.0.0.7:51234"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			act := &api.NodeActivity{}
			if tc.jupyter != "" {
				act.Jupyter = &api.JupyterReport{State: api.JupyterRunning, Addr: tc.jupyter, Token: "tok"}
			}
			if tc.ssh != "" {
				act.SSH = &api.SSHReport{State: api.SSHRunning, Addr: tc.ssh, HostKey: "ssh-ed25519 AAAA"}
			}
			confineServiceAddrs(act, tc.remote)
			if tc.jupyter != "" {
				kept := act.Jupyter.Addr == tc.jupyter && act.Jupyter.State == api.JupyterRunning
				if kept != tc.keepJupyter || !kept && (act.Jupyter.State != api.JupyterFailed || !strings.Contains(act.Jupyter.Reason, "not")) {
					t.Errorf("jupyter %s from %s: %+v, want kept=%v", tc.jupyter, tc.remote, act.Jupyter, tc.keepJupyter)
				}
			}
			if tc.ssh != "" {
				kept := act.SSH.Addr == tc.ssh && act.SSH.State == api.SSHRunning
				if kept != tc.keepSSH || !kept && act.SSH.State != api.SSHFailed {
					t.Errorf("ssh %s from %s: %+v, want kept=%v", tc.ssh, tc.remote, act.SSH, tc.keepSSH)
				}
			}
		})
	}
	confineServiceAddrs(nil, "10.0.0.7:1") // no activity: nothing to do
}
