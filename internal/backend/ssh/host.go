package ssh

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/hangar-ml/hangar/internal/remote"
)

// host is a connected target: its connection, where hangar lives there, its tunnels.
type host struct {
	name   string
	client *remote.Client
	work   string // absolute work directory on the host
	bin    string // hangar on the host
	server string // where tunnels deliver
	// serverName is the server's host, which supervisors verify its certificate for.
	serverName string

	mu       sync.Mutex
	forwards map[string]*remote.Forward // by remote port
}

// host returns the target's connection, connecting (and installing hangar) the first time.
func (b *Backend) host(ctx context.Context, name string) (*host, error) {
	b.mu.Lock()
	if h := b.hosts[name]; h != nil {
		b.mu.Unlock()
		return h, nil
	}
	b.mu.Unlock()
	st, err := b.Targets(ctx, name)
	if err != nil {
		return nil, err
	}
	if st.Spec.SSH == nil {
		return nil, fmt.Errorf("compute %s is not an ssh target", name)
	}
	client, err := remote.Connect(ctx, remote.ConfigFor(st.Spec.SSH.SSHHost), remote.ClientOptions{
		Log: b.Log.With("target", name),
		OnState: func(s remote.State) {
			b.Log.Info("ssh connection", "target", name, "connected", s.Connected, "err", s.Err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", name, err)
	}
	server, err := url.Parse(b.ServerURL())
	if err != nil || server.Host == "" {
		client.Close()
		return nil, fmt.Errorf("server URL %q: want scheme://host:port", b.ServerURL())
	}
	h := &host{name: name, client: client, server: server.Host, serverName: server.Hostname(), forwards: map[string]*remote.Forward{}}
	if err := h.install(ctx, b.Exe, st.Spec.SSH.WorkDir); err != nil {
		client.Close()
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if old := b.hosts[name]; old != nil { // another call connected meanwhile
		client.Close()
		return old, nil
	}
	if b.hosts == nil {
		b.hosts = map[string]*host{}
	}
	b.hosts[name] = h
	return h, nil
}

// install resolves the work directory and puts this hangar binary on the host (once per version).
func (h *host) install(ctx context.Context, exe, workDir string) error {
	work, err := remote.WorkDir(ctx, h.client, workDir)
	if err != nil {
		return fmt.Errorf("%s: %w", h.name, err)
	}
	h.work = work
	bin, _, err := remote.PutBinary(ctx, h.client, exe, "hangar")
	if err != nil {
		return fmt.Errorf("%s: install hangar: %w", h.name, err)
	}
	if !path.IsAbs(bin) {
		home, err := remote.Home(ctx, h.client)
		if err != nil {
			return fmt.Errorf("%s: %w", h.name, err)
		}
		bin = path.Join(home, bin)
	}
	h.bin = bin
	return nil
}

// forward returns the reverse tunnel on a remote port ("" = any new port, reused across runs).
func (h *host) forward(ctx context.Context, port string) (*remote.Forward, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if port == "" {
		for _, f := range h.forwards {
			return f, nil
		}
		port = "0"
	} else if f := h.forwards[port]; f != nil {
		return f, nil
	}
	f, err := h.client.ReverseForward(ctx, "127.0.0.1:"+port, h.server)
	if err != nil {
		return nil, fmt.Errorf("%s: tunnel to the server: %w", h.name, err)
	}
	_, p, _ := strings.Cut(f.RemoteAddr(), ":")
	h.forwards[p] = f
	return f, nil
}
