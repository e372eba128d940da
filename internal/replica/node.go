package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
)

// wakeGap is the least time between two beats when forwards fail.
const wakeGap = 100 * time.Millisecond

// DefaultBeat is how often a server refreshes its record and tries for (or checks) the lead.
const DefaultBeat = time.Second

// Config configures one server of a replicated workspace.
type Config struct {
	Store *store.Store
	// URL is this server's address as the other servers and the nodes reach it.
	URL string
	// CA is the PEM of the certificate the servers serve (empty: plain HTTP, or public CAs).
	CA []byte
	// Secret returns the workspace's secret the forwarding key derives from (nil until the
	// first leader made it).
	Secret func(ctx context.Context) ([]byte, error)
	// Lead builds the leader: it starts the controller loops under ctx and returns the API's
	// handler. It is called once, when this server takes the lead.
	Lead func(ctx context.Context) (http.Handler, error)
	// Workspace is the workspace's directory, said by the health check.
	Workspace string
	Beat      time.Duration // DefaultBeat when zero
	Now       func() time.Time
	Log       *slog.Logger
}

// Node is this server among the workspace's servers: an http.Handler that follows (forwards)
// until the server leads, and then serves the leader's handler.
type Node struct {
	cfg     Config
	id      string
	handler atomic.Pointer[http.Handler]
	fwd     *forwarder
	mu      sync.Mutex
	recs    []store.ServerRecord
	since   time.Time     // when this server took the lead, on the database's clock (zero: it follows)
	skew    time.Duration // the database's clock minus this server's, as of the last beat
	key     atomic.Value  // string: the forwarding key, once known
	// wake asks for a beat now: a forward found the leader unreachable.
	wake chan struct{}
	// taking is set while this server builds its leader; ready is closed once the leader's
	// handler serves. Requests that arrive meanwhile wait for it (this server has announced
	// itself in server.json by then) instead of being forwarded to the leader on record.
	taking atomic.Bool
	ready  chan struct{}
}

// New prepares a node; Run makes it take part.
func New(cfg Config) (*Node, error) {
	if cfg.Store == nil || cfg.URL == "" || cfg.Lead == nil || cfg.Secret == nil {
		return nil, errors.New("replica: Store, URL, Secret and Lead are required")
	}
	if cfg.Beat == 0 {
		cfg.Beat = DefaultBeat
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	n := &Node{cfg: cfg, id: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b)), wake: make(chan struct{}, 1),
		ready: make(chan struct{})}
	n.key.Store("")
	fwd, err := newForwarder(n.leaderURL, n.forwardKey, n.wakeUp, cfg.CA, cfg.Log)
	fwd.self = cfg.URL
	if err != nil {
		return nil, err
	}
	n.fwd = fwd
	var h http.Handler = n.followerHandler()
	n.handler.Store(&h)
	return n, nil
}

// ServeHTTP serves a request as this server's role now says.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*n.handler.Load()).ServeHTTP(w, r)
}

// NodeURLs is the list of servers' addresses for nodes, this one first.
func (n *Node) NodeURLs() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return NodeURLs(n.cfg.URL, n.recs, n.cfg.Now())
}

// Role says whether this server leads ("leader" or "follower") and the leader's address.
func (n *Node) Role() (role, leader string) {
	n.mu.Lock()
	leading := !n.since.IsZero()
	n.mu.Unlock()
	if leading {
		return "leader", n.cfg.URL
	}
	return "follower", n.leaderURL()
}

func (n *Node) leaderURL() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.since.IsZero() {
		return n.cfg.URL
	}
	l, ok := CurrentLeader(n.recs, n.cfg.Now())
	if !ok {
		return ""
	}
	return l.URL
}

func (n *Node) forwardKey() string { return n.key.Load().(string) }

// wakeUp asks Run for a beat now (the leader could not be reached: perhaps it died, and this
// server can take the lead without waiting for its next beat). Bursts fold into one.
func (n *Node) wakeUp() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// followerHandler answers the health check itself (a load balancer sees every live server) and
// forwards everything else. A follower cannot check a user's token, so its health check says
// only what a load balancer needs (as the leader's does without a token): no directory, no pid.
func (n *Node) followerHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", func(w http.ResponseWriter, r *http.Request) {
		role, leader := n.Role()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(api.Health{OK: true, Version: api.Version, Role: role, Leader: leader})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if n.taking.Load() {
			n.whenLeading(w, r)
			return
		}
		n.fwd.ServeHTTP(w, r)
	})
	return mux
}

// Run takes part until ctx ends (nil) or this server, leading, loses the lead (an error: the
// process must end, and its loops with it, for another server to lead alone).
func (n *Node) Run(ctx context.Context) error {
	var lead *store.Leadership
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
		defer cancel()
		if lead != nil {
			lead.Release()
		}
		_ = n.cfg.Store.DeleteServerRecord(cctx, n.id)
	}()
	tick := time.NewTicker(n.cfg.Beat)
	defer tick.Stop()
	var last time.Time
	for {
		var err error
		last = time.Now()
		if lead, err = n.step(ctx, lead); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-n.wake:
			// At most ten early beats a second, however many forwards fail.
			if gap := wakeGap - time.Since(last); gap > 0 {
				time.Sleep(gap)
			}
		}
	}
}

// callTimeout bounds each database call of a beat: a leader whose database does not answer
// within it stops (it cannot know whether it still leads).
const callTimeout = 5 * time.Second

// step is one beat: check or try for the lead, refresh this server's record, read the others'.
func (n *Node) step(runCtx context.Context, lead *store.Leadership) (*store.Leadership, error) {
	log := n.cfg.Log
	ctx, cancel := context.WithTimeout(runCtx, callTimeout)
	defer cancel()
	// Records are timed by the database's clock, so that the servers' own clocks need not agree:
	// skew turns this server's clock into it.
	if dbNow, err := n.cfg.Store.DatabaseNow(ctx); err != nil {
		log.Warn("cannot read the database's clock", "err", err)
	} else {
		n.mu.Lock()
		n.skew = dbNow.Sub(n.cfg.Now())
		n.mu.Unlock()
	}
	if lead != nil {
		if err := lead.Check(ctx); err != nil {
			if runCtx.Err() != nil {
				return lead, nil
			}
			return lead, fmt.Errorf("this server led the workspace and lost the lead: %w", err)
		}
	} else if l, err := n.cfg.Store.TryLead(ctx); err != nil {
		log.Warn("cannot try for the lead", "err", err)
	} else if l != nil {
		lead = l
		if err := n.takeLead(runCtx); err != nil { // the leader's loops live as long as Run
			return lead, err
		}
	}
	n.refreshKey(ctx)
	n.mu.Lock()
	skew := n.skew
	rec := store.ServerRecord{ID: n.id, URL: n.cfg.URL, Leader: !n.since.IsZero(), Since: n.since, Seen: n.cfg.Now().Add(skew).UTC()}
	n.mu.Unlock()
	if err := n.cfg.Store.SaveServerRecord(ctx, rec); err != nil {
		log.Warn("cannot refresh this server's record", "err", err)
	}
	recs, err := n.cfg.Store.ServerRecords(ctx)
	if err != nil {
		log.Warn("cannot read the servers' records", "err", err)
		return lead, nil
	}
	recs = OnOwnClock(recs, skew)
	n.mu.Lock()
	n.recs = recs
	n.mu.Unlock()
	if lead != nil {
		for _, id := range Stale(recs, n.cfg.Now()) {
			_ = n.cfg.Store.DeleteServerRecord(ctx, id)
		}
	}
	return lead, nil
}

// takeLead builds the leader and serves its handler from now on.
func (n *Node) takeLead(ctx context.Context) error {
	n.cfg.Log.Info("this server leads the workspace", "server", n.id, "url", n.cfg.URL)
	n.taking.Store(true)
	h, err := n.cfg.Lead(ctx)
	if err != nil {
		return fmt.Errorf("start leading: %w", err)
	}
	n.refreshKey(ctx)
	var th http.Handler = trust(n.forwardKey, h)
	n.handler.Store(&th)
	close(n.ready)
	// Only now does this server say it leads: while Lead built the leader, requests were still
	// forwarded to the leader on record (a 503 if it is gone), never to this server itself.
	n.mu.Lock()
	n.since = n.cfg.Now().Add(n.skew).UTC() // on the database's clock, as of the last beat
	n.mu.Unlock()
	return nil
}

func (n *Node) refreshKey(ctx context.Context) {
	if n.forwardKey() != "" {
		return
	}
	if s, err := n.cfg.Secret(ctx); err == nil && len(s) > 0 {
		n.key.Store(forwardKey(s))
	}
}

// whenLeading serves a request that arrived while this server was building its leader, once the
// leader serves (at most takeWait later: a 503 then, as while no server leads).
func (n *Node) whenLeading(w http.ResponseWriter, r *http.Request) {
	t := time.NewTimer(takeWait)
	defer t.Stop()
	select {
	case <-n.ready:
		(*n.handler.Load()).ServeHTTP(w, r)
	case <-r.Context().Done():
	case <-t.C:
		n.fwd.unavailable(w, r, errors.New("this server is still taking the lead"))
	}
}

// takeWait bounds how long a request waits for this server to finish taking the lead.
const takeWait = 30 * time.Second
