package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
)

// Workspace is a throwaway local workspace with its own server, reached through a counting proxy.
type Workspace struct {
	Bin    string
	Home   string
	server *exec.Cmd
	proxy  *Proxy
}

// Start creates a workspace in dir and starts its server (with env added to its environment) and proxy.
func Start(ctx context.Context, bin, dir string, env ...string) (*Workspace, error) {
	w := &Workspace{Bin: bin, Home: filepath.Join(dir, "home")}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	w.server = exec.Command(bin, "server", "--home", w.Home)
	w.server.Stdout, w.server.Stderr = logf, logf
	w.server.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	w.server.Env = append(append(os.Environ(), env...), "HANGAR_HOME="+w.Home)
	if err := w.server.Start(); err != nil {
		return nil, err
	}
	go w.server.Wait()
	h := home.Home{Dir: w.Home}
	var si *home.ServerInfo
	for deadline := time.Now().Add(20 * time.Second); ; {
		if si, err = h.Running(ctx); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("server did not start: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.proxy, err = NewProxy(si.URL[len("http://"):])
	if err != nil {
		return nil, err
	}
	return w, nil
}

// startClient is Start with an API client of the workspace; the caller stops it.
func startClient(ctx context.Context, bin, dir string, env ...string) (*Workspace, *api.Client, error) {
	w, err := Start(ctx, bin, dir, env...)
	if err != nil {
		return nil, nil, err
	}
	c, err := w.client()
	if err != nil {
		w.Stop()
		return nil, nil, err
	}
	return w, c, nil
}

// Stop stops the server and proxy, and kills the supervisors of runs still going (runs submitted
// without --stream), so that nothing outlives the benchmark.
func (w *Workspace) Stop() {
	w.proxy.Close()
	_ = w.server.Process.Signal(syscall.SIGTERM)
	for _, root := range []string{filepath.Join(w.Home, "local", "runs"), filepath.Join(filepath.Dir(w.Home), "vm-work", "runs")} {
		handles, _ := filepath.Glob(filepath.Join(root, "*", "handle.json"))
		for _, f := range handles {
			var h struct {
				PID  int `json:"pid"`
				Proc struct {
					PID int `json:"pid"`
				} `json:"proc"`
			}
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &h) == nil {
				if pid := max(h.PID, h.Proc.PID); pid > 0 {
					_ = syscall.Kill(-pid, syscall.SIGKILL) // its session: supervisor and command
				}
			}
		}
	}
}

// command is the CLI with args, set to talk to the workspace through the proxy.
func (w *Workspace) command(ctx context.Context, args ...string) (*exec.Cmd, error) {
	tok, err := home.Home{Dir: w.Home}.ReadToken()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, w.Bin, args...)
	cmd.Env = append(os.Environ(), "HANGAR_HOME="+w.Home, "HANGAR_URL=http://"+w.proxy.Addr(), "HANGAR_TOKEN="+tok)
	return cmd, nil
}

// Run runs the CLI against the workspace (through the proxy) and returns its stderr.
func (w *Workspace) Run(ctx context.Context, args ...string) (string, error) {
	cmd, err := w.command(ctx, args...)
	if err != nil {
		return "", err
	}
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	if err := cmd.Run(); err != nil {
		return errb.String(), fmt.Errorf("hangar %v: %w: %s", args, err, errb.String())
	}
	return errb.String(), nil
}

// Output runs the CLI against the workspace and returns its stdout.
func (w *Workspace) Output(ctx context.Context, args ...string) (string, error) {
	cmd, err := w.command(ctx, args...)
	if err != nil {
		return "", err
	}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hangar %v: %w", args, err)
	}
	return string(out), nil
}

// Proxy forwards TCP connections and counts the bytes sent by clients.
type Proxy struct {
	ln     net.Listener
	target string
	up     atomic.Int64
	active sync.WaitGroup
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target}
	go p.accept()
	return p, nil
}

// Addr is the proxy's address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Upstream waits for open connections to end, then returns the bytes clients sent so far and
// resets the counter.
func (p *Proxy) Upstream() int64 {
	p.active.Wait()
	return p.up.Swap(0)
}

// Bytes returns the bytes clients sent so far and resets the counter, without waiting for open
// connections (a long-lived SSH connection never closes between measurements).
func (p *Proxy) Bytes() int64 { return p.up.Swap(0) }

// Close stops accepting.
func (p *Proxy) Close() { p.ln.Close() }

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.active.Add(1)
		go func() {
			defer p.active.Done()
			p.serve(c)
		}()
	}
}

func (p *Proxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(c, s)
		close(done)
	}()
	_, _ = io.Copy(&counter{w: s, n: &p.up}, c)
	if tc, ok := s.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	<-done
}

// counter counts bytes written through it.
type counter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}
