package instances

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/instance"
	"github.com/hangar-ml/hangar/internal/store"
)

// Jupyter on compute instances: the instances' owner tells a running instance's agent to run
// Jupyter under the instance's path (Services, in the heartbeat's reply); the agent reports how it
// is doing, with its address and token, in its activity report (stored with the instance's
// signals); the server proxies the path to it (JupyterEndpoint).

// jupyterStale is how old a Jupyter report may be and still be believed: the agent sends one at
// least every agent.ActivityEvery (15 s).
const jupyterStale = 2 * time.Minute

// JupyterPath is the server's path that proxies to an instance's Jupyter (also its base_url).
func JupyterPath(name string) string { return "/instances/" + name + "/jupyter/" }

// Services is what a node's agent should run beside its runs while its instance runs:
// Jupyter under the instance's path, and an SSH server for the instance's keys when SSH access
// is on (ssh.go); nothing for a cluster's node, or an instance starting or stopping.
// (The dispatcher's Jupyter hook.)
func (m *Manager) Services(ctx context.Context, n *store.Node) api.InstanceServices {
	row, err := m.store.Instances.Get(ctx, n.Pool)
	if err != nil || instance.State(row.State) != instance.Running {
		return api.InstanceServices{}
	}
	out := api.InstanceServices{Jupyter: JupyterPath(n.Pool)}
	if _, spec, err := m.instanceSpec(ctx, n.Pool); err == nil {
		out.SSHAuthorizedKeys = sshKeys(spec)
	}
	return out
}

// JupyterTarget is where an instance's Jupyter listens, with its token and the instance's owner.
type JupyterTarget struct {
	Addr, Token, Owner string
}

// JupyterEndpoint is the running Jupyter of instance name, or a conflict saying why there is none.
func (m *Manager) JupyterEndpoint(ctx context.Context, name string) (*JupyterTarget, error) {
	v, err := m.readInstance(ctx, name)
	if err != nil {
		return nil, err
	}
	status, path := jupyterStatus(name, v.state, v.node, v.sig, m.now())
	if path == "" {
		return nil, conflictf("compute instance %s has no Jupyter to open: %s", name, status)
	}
	tok, err := m.unsealJupyterToken(v.sig)
	if err != nil {
		return nil, fmt.Errorf("compute instance %s: Jupyter's token: %w", name, err)
	}
	return &JupyterTarget{Addr: v.sig.Jupyter.Addr, Token: tok, Owner: v.spec.Owner}, nil
}

func (m *Manager) sealJupyterToken(tok string) (string, error) {
	if m.secrets == nil {
		return "", errors.New("no workspace key to seal it")
	}
	return m.secrets.Encrypt([]byte(tok))
}

// unsealJupyterToken is the token of the stored report: sealed, or in clear in a report stored
// before tokens were sealed (the next report replaces it).
func (m *Manager) unsealJupyterToken(sig signalsRecord) (string, error) {
	if sig.JupyterToken == "" {
		return sig.Jupyter.Token, nil
	}
	if m.secrets == nil {
		return "", errors.New("no workspace key to unseal it")
	}
	b, err := m.secrets.Decrypt(sig.JupyterToken)
	return string(b), err
}

func readSignals(s string) signalsRecord {
	var sig signalsRecord
	_ = json.Unmarshal([]byte(s), &sig) // unreadable or none: no report
	return sig
}

// jupyterStatus says how an instance's Jupyter is, for compute show, and its path when it can be
// opened. A report counts only from the instance's current node, and only while recent: the last
// one of a node that went away says nothing about the next.
func jupyterStatus(name string, state instance.State, node string, sig signalsRecord, now time.Time) (status, path string) {
	j := sig.Jupyter
	switch {
	case state != instance.Running:
		return fmt.Sprintf("not running: the instance is %s (Jupyter runs while it is Running)", state), ""
	case j == nil || sig.Node != node || node == "" || now.Sub(sig.ReportedAt) > jupyterStale:
		return "starting: its node has not reported Jupyter yet", ""
	case j.State == api.JupyterRunning && j.Addr != "":
		return "running at " + JupyterPath(name), JupyterPath(name)
	case j.State == api.JupyterNotInstalled:
		return "not installed: " + j.Reason, ""
	case j.State == api.JupyterFailed:
		return "failed: " + j.Reason + " (the agent starts it again)", ""
	}
	return "starting", ""
}
