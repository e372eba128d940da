package agent

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/hangar-ml/hangar/internal/runbox"
)

// sshHandshakeWithin bounds a connection's SSH handshake (a client that never authenticates).
const sshHandshakeWithin = 30 * time.Second

// sshServer is an SSH server that admits only its authorized keys (public-key authentication
// only) and serves session channels: shell, exec and the sftp subsystem, with or without a pty.
type sshServer struct {
	log     *slog.Logger
	hostKey ssh.Signer
	dir     string // where sessions start
	box     *runbox.Box
	sftp    []string

	keys atomic.Pointer[[]ssh.PublicKey]
	open atomic.Int64 // session channels open now
	ln   net.Listener
}

func newSSHServer(hostKey ssh.Signer, keys, dir string, box *runbox.Box, sftp []string, log *slog.Logger) (*sshServer, error) {
	s := &sshServer{log: log, hostKey: hostKey, dir: dir, box: box, sftp: sftp}
	if err := s.setKeys(keys); err != nil {
		return nil, err
	}
	return s, nil
}

// parseAuthorizedKeys reads authorized_keys lines (blank lines and # comments skipped).
func parseAuthorizedKeys(text string) ([]ssh.PublicKey, error) {
	var keys []ssh.PublicKey
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("ssh_settings.ssh_key_value line %d: not a public key: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("ssh_settings.ssh_key_value: no public key")
	}
	return keys, nil
}

// setKeys replaces the keys admitted from now on.
func (s *sshServer) setKeys(text string) error {
	keys, err := parseAuthorizedKeys(text)
	if err != nil {
		return err
	}
	s.keys.Store(&keys)
	return nil
}

// authorize admits a public key among the authorized ones, for any user name.
func (s *sshServer) authorize(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	want := key.Marshal()
	for _, k := range *s.keys.Load() {
		if bytes.Equal(k.Marshal(), want) {
			return &ssh.Permissions{Extensions: map[string]string{"fp": ssh.FingerprintSHA256(key)}}, nil
		}
	}
	return nil, fmt.Errorf("public key %s is not authorized", ssh.FingerprintSHA256(key))
}

func (s *sshServer) config() *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{PublicKeyCallback: s.authorize, ServerVersion: "SSH-2.0-hangar"}
	cfg.AddHostKey(s.hostKey)
	return cfg
}

// listen listens on a free port of ip.
func (s *sshServer) listen(ip string) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return fmt.Errorf("ssh server: listen on %s: %w", ip, err)
	}
	s.ln = ln
	return nil
}

func (s *sshServer) addr() string { return s.ln.Addr().String() }

// hostKeyLine is the host's public key as an authorized_keys line, without a newline.
func (s *sshServer) hostKeyLine() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.hostKey.PublicKey())))
}

func (s *sshServer) sessions() int { return int(s.open.Load()) }

// serve accepts connections until ctx ends, then closes them all and waits for their sessions.
func (s *sshServer) serve(ctx context.Context) error {
	var wg sync.WaitGroup
	conns := map[net.Conn]bool{}
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		s.ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	cfg := s.config()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			wg.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("ssh server: accept: %w", err)
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handle(ctx, c, cfg)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

// handle serves one connection: session channels only (no port forwarding, no agent forwarding).
func (s *sshServer) handle(ctx context.Context, c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(sshHandshakeWithin))
	conn, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		s.log.Info("ssh: connection refused", "remote", c.RemoteAddr(), "err", err)
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer conn.Close()
	s.log.Info("ssh: connected", "user", conn.User(), "key", conn.Permissions.Extensions["fp"])
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.Prohibited, "only sessions are served: no forwarding")
			continue
		}
		s.open.Add(1) // before Accept answers: a client whose session is open sees it counted
		ch, creqs, err := nc.Accept()
		if err != nil {
			s.open.Add(-1)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.open.Add(-1)
			(&sshSession{srv: s, ch: ch, log: s.log}).serve(ctx, creqs)
		}()
	}
	wg.Wait()
}

// loadHostKey reads the host key at path, made once (ed25519, 0600) when there is none.
func loadHostKey(path string) (ssh.Signer, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return newHostKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh host key: %w", err)
	}
	k, err := ssh.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("ssh host key %s: %w", path, err)
	}
	return k, nil
}

func newHostKey(path string) (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ssh host key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "hangar instance host key")
	if err != nil {
		return nil, fmt.Errorf("ssh host key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ssh host key: %w", err)
	}
	if _, err := f.Write(pem.EncodeToMemory(block)); err != nil {
		f.Close()
		return nil, fmt.Errorf("ssh host key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("ssh host key %s: %w", path, err)
	}
	return ssh.NewSignerFromKey(priv)
}
