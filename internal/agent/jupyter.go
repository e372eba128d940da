package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// A compute instance's Jupyter: while the server's heartbeat replies name a base URL
// (HeartbeatReply.Jupyter), the agent keeps a Jupyter server running under it (started again
// when it dies), on a Unix socket, and relays to it from a free port of the address the server
// reaches this node at, for requests with a random key that only the activity report carries
// (jupyter_run.go runs the process, jupyter_relay.go relays).

// jupyter is the agent's Jupyter server, wanted or not.
type jupyter struct {
	log       *slog.Logger
	workDir   string
	serverURL string
	// hide are the directories Jupyter and its kernels must not see, as runs must not: the
	// agent's work dir (its identity, agent token, other runs) and the workspace's home.
	hide []string

	service[api.JupyterReport]
	base string // the base URL asked for; "" none
}

func newJupyter(workDir, serverURL string, hide []string, log *slog.Logger) *jupyter {
	return &jupyter{log: log, workDir: workDir, serverURL: serverURL, hide: hide}
}

// want starts, restarts or stops Jupyter to match the base URL the server asks for.
func (j *jupyter) want(base string) {
	j.mu.Lock()
	same := base == j.base
	j.mu.Unlock()
	if same {
		return
	}
	j.stop()
	if base == "" {
		return
	}
	key, err := newJupyterToken()
	ctx, cancel := context.WithCancel(context.Background())
	j.mu.Lock()
	j.base, j.cancel, j.done = base, cancel, make(chan struct{})
	done := j.done
	j.mu.Unlock()
	if err != nil {
		j.set(&api.JupyterReport{State: api.JupyterFailed, Reason: "no random key: " + err.Error()})
		close(done)
		return
	}
	go func() {
		defer close(done)
		j.keep(ctx, jupyterRun{base: base, key: key, root: filepath.Join(j.workDir, "notebooks"),
			runtime: filepath.Join(j.workDir, "jupyter-runtime"), logFile: filepath.Join(j.workDir, "jupyter.log"),
			hide: j.hide, log: j.log})
	}()
}

// stop stops Jupyter, and its kernels, and waits for them.
func (j *jupyter) stop() { j.halt(func() { j.base = "" }) }

// take is the report to send, and whether it changed since the last one taken.
func (j *jupyter) take() (*api.JupyterReport, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.taken()
}

// keep runs Jupyter until ctx ends, starting it again when it exits, with a growing wait.
func (j *jupyter) keep(ctx context.Context, run jupyterRun) {
	backoff := api.Backoff{Base: 2 * time.Second, Max: time.Minute}
	for ctx.Err() == nil {
		started := time.Now()
		report := run.once(ctx, j.serverURL, j.set)
		if ctx.Err() != nil {
			return
		}
		j.set(report)
		if report.State == api.JupyterFailed {
			j.log.Warn("jupyter stopped; starting it again", "reason", report.Reason) // the reason has the token redacted
		}
		if time.Since(started) > 5*time.Minute {
			backoff = api.Backoff{Base: 2 * time.Second, Max: time.Minute}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Next()):
		}
	}
}

func newJupyterToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// jupyterActivity adds the Jupyter report to the activity report, sending one now (ahead of its
// time) when Jupyter's state changed: the server learns at once that it can proxy to it.
func (a *Agent) jupyterActivity(act *api.NodeActivity) *api.NodeActivity {
	r, changed := a.jupyter.take()
	if act == nil && changed {
		a.activity.last = time.Time{}
		act = a.activity.report(a.cfg.Now())
	}
	if act != nil {
		act.Jupyter = r
	}
	return act
}
