package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// Integration tests against a real sshd (internal/remote/sshtest). They skip without sshd or root,
// and fail instead when CI is set; -short skips them.

func startSSHD(t *testing.T, opts sshtest.Options) *sshtest.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("sshd integration test (-short)")
	}
	return sshtest.Start(t, opts)
}

func keyConfig(s *sshtest.Server, user string) Config {
	return Config{Host: s.Host, Port: s.Port, User: user, KeyFile: s.KeyFile,
		HostKey: HostKeyPolicy{KnownHosts: s.KnownHosts}, Timeout: 5 * time.Second}
}

func dialT(t *testing.T, cfg Config) *SSH {
	t.Helper()
	c, err := Dial(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSSHRunner(t *testing.T) {
	s := startSSHD(t, sshtest.Options{Password: true})
	// The throwaway user: the suite writes .hangar/ into its home, removed at cleanup.
	testRunner(t, dialT(t, keyConfig(s, s.TestUser)))
}

func TestSSHConnect(t *testing.T) {
	s := startSSHD(t, sshtest.Options{Password: true})
	ctx := t.Context()
	whoami := func(t *testing.T, r Runner) string {
		t.Helper()
		out, err := Output(ctx, r, "id -un")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}

	t.Run("key", func(t *testing.T) {
		if got := whoami(t, dialT(t, keyConfig(s, "root"))); got != "root" {
			t.Errorf("user %q", got)
		}
	})
	t.Run("key bytes, default port", func(t *testing.T) {
		key, err := os.ReadFile(s.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg := keyConfig(s, "root")
		cfg.KeyFile, cfg.Key = "", key
		dialT(t, cfg)
		if (Config{Host: "h"}).Addr() != "h:22" {
			t.Error("default port is not 22")
		}
	})
	t.Run("password", func(t *testing.T) {
		cfg := keyConfig(s, s.TestUser)
		cfg.KeyFile, cfg.Password = "", s.Password
		if got := whoami(t, dialT(t, cfg)); got != s.TestUser {
			t.Errorf("user %q, want %q", got, s.TestUser)
		}
	})
	t.Run("trust on first use, then pinned", func(t *testing.T) {
		cfg := keyConfig(s, "root")
		cfg.HostKey = HostKeyPolicy{TrustOnFirstUse: true}
		c := dialT(t, cfg)
		if c.HostKey() != s.HostKey() {
			t.Fatalf("HostKey = %q, want %q", c.HostKey(), s.HostKey())
		}
		cfg.HostKey = HostKeyPolicy{Pinned: c.HostKey()}
		dialT(t, cfg)
	})

	otherKey := filepath.Join(t.TempDir(), "other")
	genKey(t, otherKey)
	wrongHosts := filepath.Join(t.TempDir(), "known_hosts")
	other, err := os.ReadFile(otherKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, wrongHosts, fmt.Sprintf("[%s]:%d %s", s.Host, s.Port, other))
	emptyHosts := filepath.Join(t.TempDir(), "empty")
	writeFile(t, emptyHosts, "")
	serverFP, _ := Fingerprint(s.HostKey())
	otherFP, _ := Fingerprint(string(other))

	refused := []struct {
		name   string
		mutate func(*Config)
		is     error
		says   []string
	}{
		{"wrong key", func(c *Config) { c.KeyFile = otherKey }, ErrAuth, []string{"authentication failed", otherKey}},
		{"wrong password", func(c *Config) { c.User, c.KeyFile, c.Password = s.TestUser, "", "wrong" }, ErrAuth, []string{"authentication failed", "password"}},
		{"unknown host key", func(c *Config) { c.HostKey.KnownHosts = emptyHosts }, ErrHostKeyUnknown, []string{"host key unknown", serverFP}},
		{"known_hosts mismatch", func(c *Config) { c.HostKey.KnownHosts = wrongHosts }, ErrHostKeyChanged, []string{"host key changed", serverFP, otherFP}},
		{"pinned mismatch", func(c *Config) { c.HostKey = HostKeyPolicy{Pinned: string(other)} }, ErrHostKeyChanged, []string{serverFP, otherFP}},
		{"no policy", func(c *Config) { c.HostKey = HostKeyPolicy{} }, nil, []string{"host key policy"}},
		{"no credentials", func(c *Config) { c.KeyFile = "" }, nil, []string{"no key or password"}},
		{"unreachable", func(c *Config) { c.Port = closedPort(t) }, ErrUnreachable, []string{"unreachable", "connection refused"}},
		{"not ssh", func(c *Config) { c.Port = chattyPort(t) }, ErrHandshake, []string{"SSH handshake failed"}},
		{"handshake timeout", func(c *Config) { c.Port, c.Timeout = silentPort(t), 300*time.Millisecond }, ErrTimeout, []string{"timed out after 300ms"}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			cfg := keyConfig(s, "root")
			tt.mutate(&cfg)
			c, err := Dial(ctx, cfg)
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
			t.Log(err)
			checkOneLine(t, err, append(tt.says, "ssh "+cfg.User+"@"+cfg.Addr())...)
		})
	}
}

// TestSSHSeveralHostKeys: a host with an ECDSA and an ed25519 key, of which known_hosts or the pin
// lists the ed25519 one, is accepted (the client asks for the key type it knows).
func TestSSHSeveralHostKeys(t *testing.T) {
	s := startSSHD(t, sshtest.Options{ExtraHostKey: true})
	dialT(t, keyConfig(s, "root"))
	cfg := keyConfig(s, "root")
	cfg.HostKey = HostKeyPolicy{Pinned: s.HostKey()}
	dialT(t, cfg)
}

// TestSSHHostKeyChanged: a host re-keyed after attach (pinned) is refused, showing both fingerprints.
func TestSSHHostKeyChanged(t *testing.T) {
	s := startSSHD(t, sshtest.Options{})
	cfg := keyConfig(s, "root")
	cfg.HostKey = HostKeyPolicy{TrustOnFirstUse: true}
	c := dialT(t, cfg)
	pinned := c.HostKey()
	oldFP, _ := Fingerprint(pinned)
	s.Restart(t, true)
	newFP, _ := Fingerprint(s.HostKey())
	cfg.HostKey = HostKeyPolicy{Pinned: pinned}
	_, err := Dial(t.Context(), cfg)
	if !errors.Is(err, ErrHostKeyChanged) {
		t.Fatalf("err = %v, want ErrHostKeyChanged", err)
	}
	var he *HostKeyError
	if !errors.As(err, &he) || he.Presented != newFP || len(he.Expected) != 1 || he.Expected[0] != oldFP {
		t.Errorf("HostKeyError = %+v, want presented %s, expected %s", he, newFP, oldFP)
	}
	t.Log(err)
	checkOneLine(t, err, "expected "+oldFP, "presented "+newFP)
}

// TestSSHDetachedSurvives: a detached process outlives the connection that started it.
func TestSSHDetachedSurvives(t *testing.T) {
	s := startSSHD(t, sshtest.Options{})
	cfg := keyConfig(s, "root")
	dir := t.TempDir()
	c1, err := Dial(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := StartDetached(t.Context(), c1, Detached{Line: "sleep 60", Dir: dir, Log: "log.txt"})
	if err != nil {
		t.Fatal(err)
	}
	c1.Close()
	c2 := dialT(t, cfg)
	t.Cleanup(func() { Signal(context.Background(), c2, p, syscall.SIGKILL) })
	time.Sleep(300 * time.Millisecond) // give a hang-up, were there one, time to land
	if alive, err := Alive(t.Context(), c2, p); err != nil || !alive {
		t.Fatalf("after the connection closed: alive %v, %v", alive, err)
	}
	if err := Signal(t.Context(), c2, p, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c2, p)
}

// TestSSHReverseForward: a process on the host reaches a local HTTP server through the connection.
func TestSSHReverseForward(t *testing.T) {
	s := startSSHD(t, sshtest.Options{})
	c := connectT(t, keyConfig(s, "root"), ClientOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from the server") }))
	t.Cleanup(srv.Close)
	f, err := c.ReverseForward(t.Context(), "127.0.0.1:0", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.RemoteAddr(), "127.0.0.1:") || strings.HasSuffix(f.RemoteAddr(), ":0") {
		t.Errorf("RemoteAddr = %s", f.RemoteAddr())
	}
	if got, err := httpGetOnHost(t.Context(), c, f.RemoteAddr()); err != nil || !strings.Contains(got, "hello from the server") {
		t.Fatalf("GET through the forward = %q, %v", got, err)
	}
	f.Close()
	if got, err := httpGetOnHost(t.Context(), c, f.RemoteAddr()); err == nil {
		t.Errorf("GET after Close = %q, want failure", got)
	}
	// This sshd runs on this machine: a port taken here is taken there.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if _, err := c.ReverseForward(t.Context(), taken.Addr().String(), srv.Listener.Addr().String()); err == nil ||
		!strings.Contains(err.Error(), "AllowTcpForwarding") {
		t.Errorf("forward on a taken port: %v", err)
	}
}

// TestSSHReconnect cuts the link to a host in a network namespace: the client reports the loss,
// calls wait, and after the link is back it reconnects by itself with its reverse forward on the same
// address.
func TestSSHReconnect(t *testing.T) {
	s := startSSHD(t, sshtest.Options{NetNS: true})
	var mu sync.Mutex
	var changes []bool
	opts := ClientOptions{
		KeepAlive: 200 * time.Millisecond, KeepAliveTimeout: 600 * time.Millisecond,
		MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		OnState: func(st State) { mu.Lock(); changes = append(changes, st.Connected); mu.Unlock() },
	}
	cfg := keyConfig(s, "root")
	cfg.Timeout = time.Second
	c := connectT(t, cfg, opts)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "still here") }))
	t.Cleanup(srv.Close)
	f, err := c.ReverseForward(t.Context(), "127.0.0.1:0", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	addr := f.RemoteAddr()
	if got, err := httpGetOnHost(t.Context(), c, addr); err != nil || got != "still here" {
		t.Fatalf("before the cut: %q, %v", got, err)
	}

	s.CutLink(t)
	waitState(t, c, false)
	if listening, _ := f.Status(); listening {
		t.Error("forward listening while disconnected")
	}
	short, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	_, err = Output(short, c, "true")
	cancel()
	if !errors.Is(err, ErrDisconnected) {
		t.Errorf("Run while disconnected: %v, want ErrDisconnected", err)
	}
	// A fresh dial over the cut link times out.
	if _, err := Dial(t.Context(), cfg); !errors.Is(err, ErrTimeout) {
		t.Errorf("Dial over a cut link: %v, want ErrTimeout", err)
	} else {
		t.Log(err)
	}
	t.Logf("disconnected: %+v", c.State())
	// A call made while disconnected waits for the reconnection.
	waited := make(chan error, 1)
	go func() { _, err := Output(t.Context(), c, "true"); waited <- err }()

	s.RestoreLink(t)
	waitState(t, c, true)
	if err := <-waited; err != nil {
		t.Errorf("call across the reconnection: %v", err)
	}
	// The host frees the old forward once its sshd drops the dead connection (ClientAliveInterval).
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := httpGetOnHost(t.Context(), c, addr)
		if err == nil && got == "still here" {
			break
		}
		if time.Now().After(deadline) {
			_, ferr := f.Status()
			t.Fatalf("forward after reconnect: %q, %v (forward: %v)\n%s", got, err, ferr, s.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if f.RemoteAddr() != addr {
		t.Errorf("forward moved from %s to %s", addr, f.RemoteAddr())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) < 3 || !changes[0] || changes[1] || !changes[len(changes)-1] {
		t.Errorf("state changes %v, want connected, lost, ..., connected", changes)
	}
}

func connectT(t *testing.T, cfg Config, opts ClientOptions) *Client {
	t.Helper()
	c, err := Connect(t.Context(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if st := c.State(); !st.Connected {
		t.Fatalf("State after Connect = %+v", st)
	}
	return c
}

func waitState(t *testing.T, c *Client, connected bool) {
	t.Helper()
	if !testwait.Until(time.Now().Add(10*time.Second), func() bool { return c.State().Connected == connected }) {
		t.Fatalf("client still connected=%v after 10s: %+v", !connected, c.State())
	}
}

// httpGetOnHost fetches http://addr/ from the host with bash's /dev/tcp (no curl needed there).
func httpGetOnHost(ctx context.Context, r Runner, addr string) (string, error) {
	host, port, _ := net.SplitHostPort(addr)
	script := "exec 3<>/dev/tcp/" + host + "/" + port + " && printf 'GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n' >&3 && cat <&3"
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := Output(ctx, r, Join("bash", "-c", script))
	if err != nil {
		return "", err
	}
	_, body, ok := strings.Cut(string(out), "\r\n\r\n")
	if !ok {
		return "", fmt.Errorf("no HTTP response: %q", out)
	}
	return body, nil
}

func checkOneLine(t *testing.T, err error, says ...string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q does not say %q", msg, s)
		}
	}
}

func genKey(t *testing.T, path string) {
	t.Helper()
	// sshtest writes keys the same way; reuse it through a throwaway server-less call.
	sshtest.WriteKey(t, path)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// closedPort returns a 127.0.0.1 port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// chattyPort returns a port that answers like a web server and hangs up.
func chattyPort(t *testing.T) int {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// silentPort returns a port that accepts TCP connections and never says a word.
func silentPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().(*net.TCPAddr).Port
}
