package ssh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/remote"
)

// Backend runs supervisors on SSH hosts. One reconnecting connection is kept per target.
type Backend struct {
	// ServerAddr is the server's own host:port; the reverse tunnel delivers to it.
	ServerAddr func() string
	// Exe is the hangar binary installed on hosts (same OS and architecture).
	Exe string
	// Targets returns a target's spec with its secrets unsealed.
	Targets func(ctx context.Context, name string) (*compute.Stored, error)
	// Blobs is the workspace's blob store, from which the host's cache is filled.
	Blobs *blob.Store
	Log   *slog.Logger

	mu    sync.Mutex
	hosts map[string]*host
}

// handle is the serialisable reference to a run on a host.
type handle struct {
	Target     string      `json:"target"`
	Proc       remote.Proc `json:"proc"`
	Dir        string      `json:"dir"`
	TunnelPort string      `json:"tunnel_port"`
}

// Submit prepares the host (binary, blobs, config) and starts the run's supervisor detached.
func (b *Backend) Submit(ctx context.Context, l backend.Launch) (backend.Handle, error) {
	h, err := b.host(ctx, l.Target.Name)
	if err != nil {
		return nil, err
	}
	dir := path.Join(h.work, "runs", l.RunID)
	if data, err := h.client.ReadFile(ctx, path.Join(dir, "handle.json")); err == nil {
		var old handle
		if json.Unmarshal(data, &old) == nil {
			if alive, err := remote.Alive(ctx, h.client, old.Proc); err == nil && alive {
				return data, nil // already started (the server restarted mid-submit)
			}
		}
	}
	if err := b.seed(ctx, h, l); err != nil {
		return nil, err
	}
	fwd, err := h.forward(ctx, "")
	if err != nil {
		return nil, err
	}
	cfg := api.SupervisorConfig{
		RunID: l.RunID, Token: l.Token, ServerURL: "http://" + fwd.RemoteAddr(), Dir: dir,
		CacheDir: path.Join(h.work, "cache", "blobs"),
		Hide:     []string{h.work}, // the other runs, the cache and the installed binary
	}
	cfgJSON, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	cfgPath := path.Join(dir, "supervisor.json")
	if err := h.client.Put(ctx, cfgPath, strings.NewReader(string(cfgJSON)), 0o600); err != nil {
		return nil, fmt.Errorf("write supervisor config on %s: %w", l.Target.Name, err)
	}
	proc, err := remote.StartDetached(ctx, h.client, remote.Detached{
		Line: remote.Join(h.bin, "supervise", "--config", cfgPath), Dir: dir, Log: "system_logs/supervisor.txt",
	})
	if err != nil {
		return nil, fmt.Errorf("start supervisor on %s: %w", l.Target.Name, err)
	}
	_, port, _ := strings.Cut(fwd.RemoteAddr(), ":")
	hd, err := json.Marshal(handle{Target: l.Target.Name, Proc: proc, Dir: dir, TunnelPort: port})
	if err != nil {
		return nil, err
	}
	if err := h.client.Put(ctx, path.Join(dir, "handle.json"), strings.NewReader(string(hd)), 0o644); err != nil {
		return nil, err
	}
	b.Log.Info("started supervisor", "run", l.RunID, "target", l.Target.Name, "pid", proc.PID)
	return hd, nil
}

// Status reads the run's state on the host. An unreachable host is an error (the state is unknown).
func (b *Backend) Status(ctx context.Context, hb backend.Handle) (backend.Status, error) {
	var hd handle
	if err := json.Unmarshal(hb, &hd); err != nil {
		return backend.Status{}, fmt.Errorf("decode ssh handle: %w", err)
	}
	h, err := b.host(ctx, hd.Target)
	if err != nil {
		return backend.Status{}, err
	}
	if s := h.client.State(); !s.Connected {
		return backend.Status{}, fmt.Errorf("%s unreachable since %s: %w", hd.Target, s.Since.Format("15:04:05"), s.Err)
	}
	if _, err := h.forward(ctx, hd.TunnelPort); err != nil { // the supervisor needs it back after a restart
		b.Log.Warn("tunnel", "target", hd.Target, "err", err)
	}
	alive, err := remote.Alive(ctx, h.client, hd.Proc)
	if err != nil {
		return backend.Status{}, err
	}
	st := backend.Status{Alive: alive, Final: readResult(ctx, h, hd.Dir)}
	if !alive && st.Final == nil {
		st.Reason = "the supervisor process on " + hd.Target + " is gone and left no result"
		if err := b.reap(ctx, h, hd, st.Reason); err != nil {
			st.Reason += "; " + err.Error()
		}
		st.Final = readResult(ctx, h, hd.Dir)
	}
	return st, nil
}

// readResult reads a run's result file on the host (nil when there is none yet).
func readResult(ctx context.Context, h *host, dir string) *backend.Result {
	data, err := h.client.ReadFile(ctx, path.Join(dir, "result.json"))
	if err != nil {
		return nil
	}
	var r backend.Result
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	return &r
}

// reap has `hangar reap` on the host end what a lost supervisor's run left running and stand in
// for it (ship its spool, register its logs and outputs, write its result file).
func (b *Backend) reap(ctx context.Context, h *host, hd handle, why string) error {
	_, err := remote.Output(ctx, h.client, remote.Join(h.bin, "reap", "--run", path.Base(hd.Dir), "--dir", hd.Dir, "--why", why))
	if err != nil {
		b.Log.Warn("end a lost run's processes", "target", hd.Target, "dir", hd.Dir, "err", err)
		return fmt.Errorf("its processes could not be ended: %w", err)
	}
	return nil
}

// Cancel sends SIGTERM to the supervisor on the host; it stops the command and collects outputs.
func (b *Backend) Cancel(ctx context.Context, hb backend.Handle) error {
	var hd handle
	if err := json.Unmarshal(hb, &hd); err != nil {
		return fmt.Errorf("decode ssh handle: %w", err)
	}
	h, err := b.host(ctx, hd.Target)
	if err != nil {
		return err
	}
	if s := h.client.State(); !s.Connected {
		return fmt.Errorf("%s unreachable since %s: %w", hd.Target, s.Since.Format("15:04:05"), s.Err)
	}
	err = remote.Signal(ctx, h.client, hd.Proc, syscall.SIGTERM)
	if errors.Is(err, remote.ErrProcessGone) {
		return nil
	}
	return err
}

// Describe returns the node found when the target was attached, and whether it answers now.
func (b *Backend) Describe(ctx context.Context, t compute.Target) (*compute.NodeInfo, error) {
	st, err := compute.Load(t)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	h := b.hosts[t.Name]
	b.mu.Unlock()
	if h != nil {
		if s := h.client.State(); !s.Connected {
			return st.Node, fmt.Errorf("not connected since %s: %v", s.Since.Format("15:04:05"), s.Err)
		}
	}
	return st.Node, nil
}

// Attach connects once, checks the host (bash, architecture) and detects its node; without a
// pinned key or known_hosts file, the key it presents now is pinned in the spec.
func (b *Backend) Attach(ctx context.Context, s *compute.Spec) (*compute.NodeInfo, error) {
	if s.SSH == nil {
		return nil, errors.New("not an ssh target")
	}
	cfg := config(s.SSH.SSHHost)
	conn, err := remote.Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	n, err := remote.Detect(ctx, conn)
	if err != nil {
		return nil, err
	}
	if goarch(n.Arch) != runtime.GOARCH {
		return nil, fmt.Errorf("the host's architecture is %s but this hangar binary is for %s", n.Arch, runtime.GOARCH)
	}
	if cfg.HostKey.TrustOnFirstUse {
		s.SSH.HostKey = conn.HostKey()
	}
	info := n.NodeInfo
	if n.Podman != "" {
		info.ContainerRuntime = "podman"
	} else if n.Docker != "" {
		info.ContainerRuntime = "docker"
	}
	return &info, nil
}

// goarch maps uname -m to Go's architecture names.
func goarch(m string) string {
	switch m {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	}
	return m
}

func config(h compute.SSHHost) remote.Config {
	cfg := remote.Config{Host: h.Host, Port: h.Port, User: h.AdminUsername, Password: h.AdminPassword}
	if h.PrivateKey != "" {
		cfg.Key = []byte(h.PrivateKey)
	}
	switch {
	case h.HostKey != "":
		cfg.HostKey = remote.HostKeyPolicy{Pinned: h.HostKey}
	case h.KnownHosts != "":
		cfg.HostKey = remote.HostKeyPolicy{KnownHosts: h.KnownHosts}
	default:
		cfg.HostKey = remote.HostKeyPolicy{TrustOnFirstUse: true}
	}
	return cfg
}
