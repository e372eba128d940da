package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Instance is a compute instance's life as compute show, start, stop and restart return it
// (design 0018).
type Instance struct {
	Name   string    `json:"name"`
	State  string    `json:"state"` // Starting, Running, Stopping, Stopped, Failed
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	Owner  string    `json:"owner,omitempty"`
	// Idle is the idle judgement: "busy: job X", "idle for 12 of 30 minutes: no job, ...".
	Idle                string `json:"idle"`
	IdleShutdownMinutes int    `json:"idle_shutdown_minutes,omitempty"`
	// Node is the instance's node while it has one, with its state.
	Node      string           `json:"node,omitempty"`
	NodeState string           `json:"node_state,omitempty"`
	Scripts   []InstanceScript `json:"scripts,omitempty"`
	// Schedules are the enabled schedules, as "stop at 0 18 * * 1-5 (Europe/Berlin)".
	Schedules []string `json:"schedules,omitempty"`
	// SSH says how to connect (or why connect-ssh cannot); Jupyter whether JupyterLab runs.
	SSH     string `json:"ssh"`
	Jupyter string `json:"jupyter"`
	// JupyterPath is the server's path that proxies to the instance's Jupyter, while it runs.
	JupyterPath string `json:"jupyter_path,omitempty"`
	// SSHHostKey is the instance's SSH server's host key (an authorized_keys line) while it
	// runs: connect-ssh pins it.
	SSHHostKey string `json:"ssh_host_key,omitempty"`
}

// InstanceScript is a setup script's run on the instance.
type InstanceScript struct {
	Kind     string `json:"kind"` // creation_script | startup_script
	Run      string `json:"run"`
	Status   string `json:"status"`
	ExitCode *int   `json:"exit_code,omitempty"`
}

// Get returns a compute instance's life.
func (c *InstanceClient) Get(ctx context.Context, name string) (*Instance, error) {
	return call[Instance](ctx, c.client, http.MethodGet, "/api/computes/"+url.PathEscape(name)+"/instance", nil)
}

// Action starts, stops or restarts a compute instance (action: start, stop, restart);
// force lets a stop cancel the instance's active jobs.
func (c *InstanceClient) Action(ctx context.Context, name, action string, force bool) (*Instance, error) {
	path := "/api/computes/" + url.PathEscape(name) + "/" + url.PathEscape(action) + "?force=" + strconv.FormatBool(force)
	return call[Instance](ctx, c.client, http.MethodPost, path, nil)
}

// SSHUpgrade is the protocol GET /instances/{name}/ssh upgrades to: raw bytes to and from the
// instance's SSH server.
const SSHUpgrade = "hangar-ssh"
