package remote

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Forward is a reverse (remote) port forward: the host listens on RemoteAddr and each connection it
// accepts is carried through the SSH connection to a local address. It lets a process on the host
// reach the server without any route to it.
type Forward struct {
	c      *Client
	local  string
	remote string // host:port with the port the host chose the first time, kept across reconnects

	mu     sync.Mutex
	ln     net.Listener // nil while not listening
	err    error        // why it is not listening
	closed bool
	done   chan struct{}
}

// ReverseForward asks the host to listen on remoteAddr ("127.0.0.1:0" lets it choose a port) and
// forwards what it accepts to localAddr. After a reconnection the Client asks for the same port again,
// retrying while the host still holds it for the dead connection (until its sshd notices: its
// ClientAliveInterval, or TCP), so the address handed to remote processes stays valid.
func (c *Client) ReverseForward(ctx context.Context, remoteAddr, localAddr string) (*Forward, error) {
	live, err := c.conn(ctx)
	if err != nil {
		return nil, err
	}
	ln, err := live.listen(ctx, remoteAddr)
	if err != nil {
		hint := ""
		if strings.Contains(err.Error(), "denied") {
			hint = " (the port is taken, or the host's sshd has AllowTcpForwarding no or local)"
		}
		return nil, fmt.Errorf("reverse forward %s on %s: %w%s", remoteAddr, c.cfg.Addr(), err, hint)
	}
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("reverse forward %s: %w", remoteAddr, err)
	}
	f := &Forward{c: c, local: localAddr, done: make(chan struct{}),
		remote: net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))}
	c.mu.Lock()
	c.forwards[f] = true
	current := c.live
	c.mu.Unlock()
	if current == live {
		f.serve(live, ln)
	} else { // reconnected meanwhile: that listener is dead, and setConnected did not know f yet
		ln.Close()
		if current != nil {
			go f.establish(current)
		}
	}
	return f, nil
}

// RemoteAddr is the address the host listens on ("127.0.0.1:41234").
func (f *Forward) RemoteAddr() string { return f.remote }

// Status reports whether the host is listening now, and if not, why.
func (f *Forward) Status() (listening bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ln != nil, f.err
}

// Close stops the forward (the host stops listening; open connections are closed).
func (f *Forward) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	close(f.done)
	ln := f.ln
	f.ln = nil
	f.mu.Unlock()
	f.c.mu.Lock()
	delete(f.c.forwards, f)
	f.c.mu.Unlock()
	if ln != nil {
		return ln.Close()
	}
	return nil
}

// establish listens on the forward's address over live, retrying with backoff until it works, the
// connection is gone or the forward is closed.
func (f *Forward) establish(live *liveConn) {
	wait := 200 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ln, err := live.listen(ctx, f.remote)
		cancel()
		if err == nil {
			f.serve(live, ln)
			return
		}
		f.mu.Lock()
		f.err = fmt.Errorf("reverse forward %s: %w", f.remote, err)
		f.mu.Unlock()
		select {
		case <-live.gone:
			return
		case <-f.done:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// serve records ln as the forward's listener and accepts on it until it fails.
func (f *Forward) serve(live *liveConn, ln net.Listener) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		ln.Close()
		return
	}
	f.ln, f.err = ln, nil
	f.mu.Unlock()
	go func() {
		for {
			rc, err := ln.Accept()
			if err != nil {
				f.mu.Lock()
				if f.ln == ln {
					f.ln, f.err = nil, fmt.Errorf("reverse forward %s: connection lost", f.remote)
				}
				f.mu.Unlock()
				ln.Close()
				return
			}
			go f.proxy(rc)
		}
	}()
	go func() { // the listener dies with its connection; close it so Accept returns
		select {
		case <-live.gone:
			ln.Close()
		case <-f.done:
		}
	}()
}

// proxy connects one accepted connection to the local address and copies both ways.
func (f *Forward) proxy(rc net.Conn) {
	defer rc.Close()
	lc, err := net.DialTimeout("tcp", f.local, 10*time.Second)
	if err != nil {
		f.c.opts.Log.Warn("reverse forward: local dial failed", "local", f.local, "err", err)
		return
	}
	defer lc.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(lc, rc)
	go pipe(rc, lc)
	select {
	case <-done:
		<-done
	case <-f.done:
	}
}
