package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/local"
	"github.com/hangar-ml/hangar/internal/compute"
)

// Defaults for zero Config fields.
const (
	DefaultHeartbeat = 2 * time.Second
	DefaultExitGrace = 30 * time.Second
	DefaultKeepEnded = 10 * time.Minute
	callTimeout      = 10 * time.Second
)

// Config configures an agent.
type Config struct {
	// ServerURL is the workspace server as seen from this machine (the join URL).
	ServerURL string
	// ServerCA is the PEM of an https server's certificate ($HANGAR_JOIN_CA): the only one the
	// agent and the supervisors it starts trust.
	ServerCA []byte
	// JoinToken admits the agent the first time; a saved identity in WorkDir is used instead
	// when it is for the same node.
	JoinToken string
	// WorkDir holds the agent's identity, runs/<id>/ and the node's blob and environment caches.
	WorkDir string
	// Hide are more directories the runs must not see besides WorkDir (on a machine that also
	// holds the workspace's home, that home).
	Hide []string
	// NodeID, when set, must be the node the join token names.
	NodeID string
	Slice  Slice
	Labels map[string]string
	// Heartbeat is how often the agent reports.
	Heartbeat time.Duration
	// KillRunsOnExit makes SIGTERM cancel the agent's runs (waiting up to ExitGrace for their
	// supervisors to finish) instead of leaving them running.
	KillRunsOnExit bool
	ExitGrace      time.Duration
	// NoticeGrace bounds the wait for the runs' checkpoint saves on a shutdown notice
	// (notice.go); DefaultNoticeGrace when zero.
	NoticeGrace time.Duration
	// KeepEnded is how long a run that ended is still reported.
	KeepEnded time.Duration
	// KeepRunDirs is how long a run's directory stays once the server recorded its end
	// (DefaultKeepRunDirs when zero).
	KeepRunDirs time.Duration
	// ObjectCacheBytes bounds the node's object cache (api.SupervisorConfig.ObjectCacheBytes).
	ObjectCacheBytes int64
	// Exe is the hangar binary that runs `hangar supervise`.
	Exe     string
	Version string
	// Machine describes this machine (node.Detect).
	Machine *compute.NodeInfo
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Agent is one node of a managed cluster.
type Agent struct {
	cfg  Config
	log  *slog.Logger
	info api.AgentInfo
	runs *runs
	id   identity
	api  *api.Client
	// verify is how api clients check an https server (api.WithCA of ServerCA).
	verify api.Option
	// acks are work ids acted on and not yet reported; register asks the next heartbeat to
	// carry everything the agent offers; offline is set while the server cannot be reached.
	acks     []int64
	register bool
	offline  bool
	draining bool
	gone     bool
	// activity measures the node's use for its heartbeats (activity.go).
	activity activityMeter
	// jupyter is a compute instance's Jupyter server (jupyter.go).
	jupyter *jupyter
	// ssh is a compute instance's SSH server (ssh.go).
	ssh *sshService
	// noticed is set once the machine got its shutdown notice (notice.go): heartbeats say so.
	noticed bool
	// servers is the server address list the supervisors it starts get: ServerURL, then what
	// heartbeat replies of a workspace with several servers say (design 0020).
	servers atomic.Value
}

// New prepares an agent: it works out what it offers and adopts the runs in its work dir.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*Agent, error) {
	if cfg.ServerURL == "" || cfg.WorkDir == "" || cfg.Exe == "" || cfg.Machine == nil {
		return nil, errors.New("agent: ServerURL, WorkDir, Exe and Machine are required")
	}
	verify, err := api.WithCA(cfg.ServerCA, "")
	if err != nil {
		return nil, fmt.Errorf("agent: server certificate ($HANGAR_JOIN_CA): %w", err)
	}
	cfg.Heartbeat = orDefault(cfg.Heartbeat, DefaultHeartbeat)
	cfg.ExitGrace = orDefault(cfg.ExitGrace, DefaultExitGrace)
	cfg.KeepEnded = orDefault(cfg.KeepEnded, DefaultKeepEnded)
	cfg.KeepRunDirs = orDefault(cfg.KeepRunDirs, DefaultKeepRunDirs)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	dir, err := filepath.Abs(cfg.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	cfg.WorkDir = dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	info, err := Offer(cfg.Machine, cfg.Slice, cfg.Labels)
	if err != nil {
		return nil, err
	}
	info.Version = cfg.Version
	// Runs see their own directory of the work dir, not the agent's identity or the other runs.
	var a *Agent
	sup := &local.Backend{Root: dir, Exe: cfg.Exe, ServerURL: func() string { return a.servers.Load().(string) },
		ServerCA: cfg.ServerCA, Hide: append([]string{cfg.WorkDir}, cfg.Hide...), Log: log, ObjectCacheBytes: cfg.ObjectCacheBytes}
	a = &Agent{cfg: cfg, log: log, info: info, verify: verify, runs: &runs{sup: sup, keep: cfg.KeepEnded, keepDirs: cfg.KeepRunDirs, log: log, now: cfg.Now},
		jupyter: newJupyter(dir, cfg.ServerURL, sup.Hide, log),
		ssh:     newSSHService(dir, cfg.ServerURL, sup.Hide, []string{cfg.Exe, "agent", "sftp-server"}, log)}
	a.servers.Store(cfg.ServerURL)
	if err := a.runs.adopt(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// Info is what the agent offers.
func (a *Agent) Info() api.AgentInfo { return a.info }

// Run joins (or re-registers) and heartbeats until the agent is released and idle, the server
// forgets the node, or ctx ends. Supervisors keep running while the server is unreachable; when
// ctx ends they keep running too, unless KillRunsOnExit.
func (a *Agent) Run(ctx context.Context) error {
	// Taken from the start: the signal's default action would end the agent.
	notices := make(chan os.Signal, 1)
	signal.Notify(notices, api.NoticeSignal)
	defer signal.Stop(notices)
	a.log.Info("agent starting", "server", a.cfg.ServerURL, "node", a.cfg.NodeID, "work_dir", a.cfg.WorkDir)
	if err := a.connect(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	a.runs.sup.NodeID = a.id.NodeID // supervisors ask for their node's place in distributed runs
	a.log.Info(api.AgentReadyLog, "node", a.id.NodeID, "pool", a.id.Pool, "offers", a.info.Capacity.String(),
		"runs", len(a.runs.known), "server", a.cfg.ServerURL)
	defer a.jupyter.stop() // Jupyter and SSH are the instance's: they end with the agent
	defer a.ssh.stop()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return a.stop()
		case <-notices:
			a.takeNotice(ctx)
		case <-t.C:
		}
		sent := time.Now()
		again, done := a.beat(ctx)
		if done {
			return nil
		}
		// After a long poll (the server held the heartbeat until there was work, or for the
		// interval), or with something to tell the server, the next heartbeat goes at once; a
		// server that does not hold heartbeats, or an outage, has the agent wait out the interval.
		next := a.cfg.Heartbeat - time.Since(sent)
		if again || next < 0 {
			next = 0
		}
		t.Reset(next)
	}
}

// connect uses the saved identity when it is for this node, else joins with the join token.
func (a *Agent) connect(ctx context.Context) error {
	id, err := loadIdentity(a.cfg.WorkDir)
	want := a.cfg.NodeID
	if want == "" {
		want = tokenNode(a.cfg.JoinToken)
	}
	if err == nil && (want == "" || want == id.NodeID) {
		a.id, a.register = id, true
		a.api = api.NewClient(a.servers.Load().(string), id.AgentToken, a.verify)
		return nil
	}
	if a.cfg.JoinToken == "" {
		return fmt.Errorf("no join token, and no agent identity in %s", a.cfg.WorkDir)
	}
	return a.join(ctx)
}

// join joins with the join token, retrying while the server cannot be reached.
func (a *Agent) join(ctx context.Context) error {
	c := api.NewClient(a.servers.Load().(string), a.cfg.JoinToken, a.verify)
	req := api.JoinRequest{NodeID: a.cfg.NodeID, AgentInfo: a.info, Runs: a.runs.report(ctx)}
	backoff := api.Backoff{Base: time.Second, Max: 30 * time.Second}
	for {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		rep, err := c.Agents.Join(cctx, req)
		cancel()
		if err == nil {
			a.id = identity{NodeID: rep.NodeID, Pool: rep.Pool, AgentToken: rep.AgentToken}
			a.api = api.NewClient(a.servers.Load().(string), rep.AgentToken, a.verify)
			return saveIdentity(a.cfg.WorkDir, a.id)
		}
		if api.Permanent(err) || ctx.Err() != nil {
			return fmt.Errorf("join %s: %w", a.cfg.ServerURL, err)
		}
		wait := backoff.Next()
		a.log.Warn("cannot reach the server to join; retrying", "server", a.cfg.ServerURL, "err", err, "in", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

func status(err error) int {
	var e *api.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
