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
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote"
)

// Backend runs supervisors on SSH hosts. One reconnecting connection is kept per target.
type Backend struct {
	// ServerURL is the server's own address (http or https); the reverse tunnel delivers to its
	// host:port. ServerCA is the PEM of an https server's certificate: the only one supervisors
	// trust, verified for the server's own host although they reach it through the tunnel.
	ServerURL func() string
	ServerCA  []byte
	// Exe is the hangar binary installed on hosts (same OS and architecture).
	Exe string
	// Targets returns a target's spec with its secrets unsealed.
	Targets func(ctx context.Context, name string) (*compute.Stored, error)
	// Blobs is the workspace's blob store, from which the host's cache is filled.
	Blobs *blob.Store
	// ObjectCacheBytes bounds the node's object cache (api.SupervisorConfig.ObjectCacheBytes).
	ObjectCacheBytes int64
	Log              *slog.Logger

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

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Describer = (*Backend)(nil)
	_ backend.Attacher  = (*Backend)(nil)
)

// Submit prepares the host (binary, blobs, config) and starts the run's supervisor detached.
// Called again for a run whose supervisor runs, it returns that supervisor's handle.
func (b *Backend) Submit(ctx context.Context, l backend.Launch) (backend.Handle, error) {
	h, err := b.host(ctx, l.Target.Name)
	if err != nil {
		return nil, err
	}
	dir := path.Join(h.work, "runs", l.RunID)
	if data, err := h.client.ReadFile(ctx, path.Join(dir, "handle.json")); err == nil {
		var old handle
		if backend.DecodeHandle(data, &old) == nil {
			if alive, err := remote.Alive(ctx, h.client, old.Proc); err == nil && alive {
				return data, nil // already started (the server restarted mid-submit)
			}
		}
	}
	st, err := remote.SeedCache(ctx, h.client, path.Join(h.work, "cache", "blobs"), b.Blobs, l.Manifests())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.name, err)
	}
	if st.Manifests > 0 {
		b.Log.Info("seeded host cache", "target", h.name, "present", st.Present, "sent", st.Sent, "bytes", st.Bytes)
	}
	fwd, err := h.forward(ctx, "")
	if err != nil {
		return nil, err
	}
	scheme, serverName := "http", ""
	if len(b.ServerCA) > 0 {
		scheme, serverName = "https", h.serverName
	}
	cfg := api.SupervisorConfig{
		RunID: l.RunID, Token: l.Token, ServerURL: scheme + "://" + fwd.RemoteAddr(), Dir: dir,
		ServerCA: string(b.ServerCA), ServerName: serverName,
		CacheDir:         path.Join(h.work, "cache", "blobs"),
		Hide:             []string{h.work}, // the other runs, the cache and the installed binary
		ObjectCacheBytes: b.ObjectCacheBytes,
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

// resolve decodes a handle and connects to its host. A handle that does not name a run directory of
// that host's work dir is refused: Status would reap what it names.
func (b *Backend) resolve(ctx context.Context, hb backend.Handle) (handle, *host, error) {
	var hd handle
	if err := backend.DecodeHandle(hb, &hd); err != nil {
		return hd, nil, err
	}
	if hd.Target == "" || hd.Proc.PID <= 0 || hd.Dir == "" {
		return hd, nil, fmt.Errorf("%w: ssh handle %s lacks its target, pid or directory", backend.ErrBadHandle, hb)
	}
	h, err := b.host(ctx, hd.Target)
	if err != nil {
		return hd, nil, err
	}
	if path.Dir(hd.Dir) != path.Join(h.work, "runs") {
		return hd, nil, fmt.Errorf("%w: %s is not a run directory of %s", backend.ErrBadHandle, hd.Dir, hd.Target)
	}
	if err := h.client.Unreachable(hd.Target); err != nil {
		return hd, nil, err
	}
	return hd, h, nil
}

// Status reads the run's state on the host. An unreachable host is an error (the state is unknown).
func (b *Backend) Status(ctx context.Context, hb backend.Handle) (backend.Status, error) {
	hd, h, err := b.resolve(ctx, hb)
	if err != nil {
		return backend.Status{}, err
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
func readResult(ctx context.Context, h *host, dir string) *job.Result {
	data, err := h.client.ReadFile(ctx, path.Join(dir, job.ResultFile))
	if err != nil {
		return nil
	}
	r, _ := job.ParseResult(data)
	return r
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
	hd, h, err := b.resolve(ctx, hb)
	if err != nil {
		return err
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
		if err := h.client.Unreachable(t.Name); err != nil {
			return st.Node, err
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
	cfg := remote.ConfigFor(s.SSH.SSHHost)
	conn, err := remote.Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	n, err := remote.Detect(ctx, conn)
	if err != nil {
		return nil, err
	}
	if err := remote.CheckArch(n.Arch, runtime.GOARCH); err != nil {
		return nil, err
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
