package remote

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// ClientOptions tune a Client; zero values take the defaults.
type ClientOptions struct {
	// KeepAlive is how often the client probes the connection (5 s); a probe unanswered for
	// KeepAliveTimeout (10 s) drops it, so a silent network failure is noticed.
	KeepAlive        time.Duration
	KeepAliveTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between reconnection attempts (0.5 s, 30 s); it
	// doubles after each failure, with jitter.
	MinBackoff, MaxBackoff time.Duration
	// OnState, when set, is called with every change of State, from the client's own goroutine;
	// it must not block.
	OnState func(State)
	Log     *slog.Logger
}

func (o *ClientOptions) defaults() {
	if o.KeepAlive <= 0 {
		o.KeepAlive = 5 * time.Second
	}
	if o.KeepAliveTimeout <= 0 {
		o.KeepAliveTimeout = 2 * o.KeepAlive
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// State is a Client's connectivity, for marking a host NotResponding after a while.
type State struct {
	Connected bool
	// Since is when Connected last changed.
	Since time.Time
	// Err is why the client is not connected: what dropped the connection, then the last failed
	// reconnection attempt (an ErrHostKeyChanged here means the host was replaced).
	Err error
	// Attempts counts the failed reconnection attempts since the connection dropped.
	Attempts int
}

// Client is an SSH connection that re-dials with backoff when it drops, and re-establishes its
// reverse forwards on the new connection. It implements Runner: calls made while disconnected wait
// for the connection until their context ends (then fail with ErrDisconnected); a call in flight
// when the connection drops fails.
type Client struct {
	cfg  Config
	opts ClientOptions

	ctx    context.Context // ended by Close: stops dials
	cancel context.CancelFunc
	done   chan struct{} // the loop exited

	mu       sync.Mutex
	live     *liveConn     // nil while disconnected
	ready    chan struct{} // closed when live is set
	state    State
	forwards map[*Forward]bool
}

// liveConn is one connection and a channel closed once it is gone.
type liveConn struct {
	*SSH
	gone chan struct{}
}

// Connect dials the host once, returning Dial's errors as they are (wrong key, unknown host key,
// unreachable...), and from then on keeps the connection up until Close. With TrustOnFirstUse the
// key seen now is pinned for every reconnection.
func Connect(ctx context.Context, cfg Config, opts ClientOptions) (*Client, error) {
	opts.defaults()
	conn, err := Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.HostKey.TrustOnFirstUse {
		cfg.HostKey = HostKeyPolicy{Pinned: conn.HostKey()}
	}
	c := &Client{cfg: cfg, opts: opts, done: make(chan struct{}), ready: make(chan struct{}), forwards: map[*Forward]bool{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	live := c.setConnected(conn)
	go c.loop(live)
	return c, nil
}

// HostKey returns the host key in authorized_keys form (the pinned one after TrustOnFirstUse).
func (c *Client) HostKey() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != nil {
		return c.live.HostKey()
	}
	return c.cfg.HostKey.Pinned
}

// State returns the current connectivity.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Close stops reconnecting, closes the forwards and the connection.
func (c *Client) Close() error {
	c.cancel()
	<-c.done
	return nil
}

// Run runs a command on the current connection (see Runner).
func (c *Client) Run(ctx context.Context, cmd Cmd) (int, error) {
	conn, err := c.conn(ctx)
	if err != nil {
		return -1, err
	}
	return conn.Run(ctx, cmd)
}

// Put writes a file atomically on the current connection (see Runner).
func (c *Client) Put(ctx context.Context, path string, r io.Reader, mode fs.FileMode) error {
	conn, err := c.conn(ctx)
	if err != nil {
		return err
	}
	return conn.Put(ctx, path, r, mode)
}

// ReadFile reads a file on the current connection (see Runner).
func (c *Client) ReadFile(ctx context.Context, path string) ([]byte, error) {
	conn, err := c.conn(ctx)
	if err != nil {
		return nil, err
	}
	return conn.ReadFile(ctx, path)
}

// conn returns the live connection, waiting for one until ctx ends.
func (c *Client) conn(ctx context.Context) (*liveConn, error) {
	for {
		c.mu.Lock()
		live, ready, st := c.live, c.ready, c.state
		c.mu.Unlock()
		if c.ctx.Err() != nil {
			return nil, fmt.Errorf("ssh %s: %w", c.cfg.target(), ErrClosed)
		}
		if live != nil {
			return live, nil
		}
		select {
		case <-ready:
		case <-c.ctx.Done():
		case <-ctx.Done():
			return nil, fmt.Errorf("ssh %s: %w since %s (%v): %w", c.cfg.target(), ErrDisconnected,
				st.Since.Format(time.RFC3339), st.Err, ctx.Err())
		}
	}
}

func (c *Client) setConnected(conn *SSH) *liveConn {
	live := &liveConn{SSH: conn, gone: make(chan struct{})}
	c.mu.Lock()
	c.live = live
	close(c.ready)
	c.state = State{Connected: true, Since: time.Now()}
	st := c.state
	for f := range c.forwards {
		go f.establish(live)
	}
	c.mu.Unlock()
	c.notify(st)
	return live
}

func (c *Client) setDisconnected(err error) {
	c.mu.Lock()
	c.live = nil
	c.ready = make(chan struct{})
	c.state = State{Since: time.Now(), Err: err}
	st := c.state
	c.mu.Unlock()
	c.opts.Log.Warn("ssh connection lost", "host", c.cfg.Addr(), "err", err)
	c.notify(st)
}

func (c *Client) notify(st State) {
	if c.opts.OnState != nil {
		c.opts.OnState(st)
	}
}

// loop serves each connection until it drops, then redials, until Close.
func (c *Client) loop(live *liveConn) {
	defer close(c.done)
	for {
		err := c.serve(live)
		close(live.gone)
		if c.ctx.Err() != nil {
			c.closeForwards()
			return
		}
		c.setDisconnected(err)
		conn := c.redial()
		if conn == nil {
			c.closeForwards()
			return
		}
		c.opts.Log.Info("ssh connection restored", "host", c.cfg.Addr())
		live = c.setConnected(conn)
	}
}

// serve probes the connection until it is gone and says why it went.
func (c *Client) serve(live *liveConn) error {
	closed := make(chan error, 1)
	go func() { closed <- live.Wait() }()
	tick := time.NewTicker(c.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case err := <-closed:
			if err == nil {
				err = io.EOF
			}
			return fmt.Errorf("connection closed: %w", err)
		case <-c.ctx.Done():
			live.Close()
			<-closed
			return ErrClosed
		case <-tick.C:
			if !live.keepAlive(c.opts.KeepAliveTimeout) {
				live.Close()
				<-closed
				return fmt.Errorf("keepalive unanswered for %s", c.opts.KeepAliveTimeout)
			}
		}
	}
}

// redial dials with backoff until it connects (the connection) or the client is closed (nil).
func (c *Client) redial() *SSH {
	wait := c.opts.MinBackoff
	for attempt := 1; ; attempt++ {
		jitter := time.Duration(rand.Int64N(int64(wait)/4 + 1))
		select {
		case <-c.ctx.Done():
			return nil
		case <-time.After(wait + jitter):
		}
		conn, err := Dial(c.ctx, c.cfg)
		if err == nil {
			return conn
		}
		if c.ctx.Err() != nil {
			return nil
		}
		c.mu.Lock()
		c.state.Err, c.state.Attempts = err, attempt
		st := c.state
		c.mu.Unlock()
		c.opts.Log.Debug("ssh reconnect failed", "host", c.cfg.Addr(), "attempt", attempt, "err", err)
		c.notify(st)
		wait = min(2*wait, c.opts.MaxBackoff)
	}
}

func (c *Client) closeForwards() {
	c.mu.Lock()
	fs := make([]*Forward, 0, len(c.forwards))
	for f := range c.forwards {
		fs = append(fs, f)
	}
	c.mu.Unlock()
	for _, f := range fs {
		f.Close()
	}
}
