package objtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy relays TCP connections to a target and can cut them all mid-transfer: the first time the
// bytes it has sent back to clients pass CutAfter, it closes every open connection (once), as a
// network would that dropped.
type Proxy struct {
	Addr   string // host:port to dial instead of the target
	target string
	ln     net.Listener

	cutAfter atomic.Int64 // 0: never
	cut      atomic.Bool
	sent     atomic.Int64 // bytes relayed to clients, all connections
	mu       sync.Mutex
	conns    map[net.Conn]bool

	stallAt     atomic.Int64  // 0: never
	stalled     chan struct{} // closed once a relay has stalled
	released    chan struct{} // closed by Release
	releaseOnce sync.Once
	stalledOnce sync.Once
}

// NewProxy relays 127.0.0.1:<port> to target (host:port) until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]bool{},
		stalled: make(chan struct{}), released: make(chan struct{})}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Release(); p.closeAll() })
	return p
}

// Rewrite is endpoint (a URL of the target) with the proxy's address instead.
func (p *Proxy) Rewrite(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	u.Host = p.Addr
	return u.String()
}

// CutAfter arms the cut: once n bytes more have gone back to clients, every connection closes.
func (p *Proxy) CutAfter(n int64) {
	p.cut.Store(false)
	p.cutAfter.Store(p.sent.Load() + n)
}

// StallAfter arms a stall: once n bytes more have gone back to clients, every relay stops
// sending (the connections stay open, silent) until Release.
func (p *Proxy) StallAfter(n int64) { p.stallAt.Store(p.sent.Load() + n) }

// Stalled is closed once the relays have stalled.
func (p *Proxy) Stalled() <-chan struct{} { return p.stalled }

// Release lets stalled relays go on.
func (p *Proxy) Release() {
	p.releaseOnce.Do(func() { close(p.released) })
}

// Cuts says whether the armed cut happened.
func (p *Proxy) Cut() bool { return p.cut.Load() }

// Sent is the number of bytes relayed back to clients so far.
func (p *Proxy) Sent() int64 { return p.sent.Load() }

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

func (p *Proxy) relay(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		delete(p.conns, up)
		p.mu.Unlock()
		c.Close()
		up.Close()
	}()
	go func() { io.Copy(up, c); up.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
			total := p.sent.Add(int64(n))
			if at := p.stallAt.Load(); at > 0 && total >= at {
				p.stallOnce()
				<-p.released
			}
			if at := p.cutAfter.Load(); at > 0 && total >= at && p.cut.CompareAndSwap(false, true) {
				p.cutAfter.Store(0)
				p.closeAll()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *Proxy) stallOnce() {
	p.stalledOnce.Do(func() { close(p.stalled) })
}
