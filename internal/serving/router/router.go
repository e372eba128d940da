// Package router is the online endpoints' proxy in the server: it authorizes a scoring request,
// chooses a deployment (traffic split or the azureml-model-deployment header), copies it to
// mirrored deployments, and forwards it to the ready replica with the fewest requests in
// flight, within the deployment's request settings. The routing table is swapped whole by the
// controller (Set); the router reports the load the autoscaler decides from (Load).
// See docs/design/0014-serving.md.
package router

import (
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
)

// Defaults of Config.
const (
	DefaultMaxBody     = 100 << 20
	DefaultHoldTimeout = 2 * time.Minute
	DefaultMaxHeld     = 1000
	DefaultMaxMirrors  = 64
	DefaultProbeTick   = time.Second
)

// Defaults of a deployment's request settings, as in Azure's schema.
const (
	DefaultRequestTimeout = 5 * time.Second
	DefaultMaxQueueWait   = 500 * time.Millisecond
	DefaultScoringPath    = "/score"
)

// DeploymentHeader names the deployment a request goes to (and the one that answered it).
const DeploymentHeader = "azureml-model-deployment"

// Config is what the router needs from the server. Callbacks must not block.
type Config struct {
	Log *slog.Logger
	Now func() time.Time
	// Rand is a uniform draw in [0, 1): the traffic split and the mirrors.
	Rand func() float64
	// Authorize says whether bearer (an endpoint key or token) may call endpoint. It is asked
	// before the router looks at its table, so an unknown endpoint is told apart from a known
	// one only by a caller who holds its key.
	Authorize func(endpoint, bearer string) bool
	// Wake is called when a request is held because a deployment has no ready replica.
	Wake func(endpoint, deployment string)
	// Unhealthy is called when a replica's liveness probe failed FailureThreshold times in a row.
	Unhealthy func(replicaID, reason string)
	MaxBody   int64
	// HoldTimeout bounds how long a request waits for a replica to be ready (scale from zero).
	HoldTimeout time.Duration
	// MaxHeld bounds the requests held per deployment; more are refused with 503.
	MaxHeld int
	// MaxMirrors bounds the mirrored copies in flight across the router; more are dropped.
	MaxMirrors int
	// ProbeTick is how often RunProber looks for probes that are due.
	ProbeTick time.Duration
}

// Table is the whole routing table: endpoint name → its routes.
type Table map[string]Endpoint

// Endpoint is one endpoint's traffic split, mirrors and deployments.
type Endpoint struct {
	Traffic     map[string]int
	Mirror      map[string]int
	Deployments map[string]Deployment
}

// Deployment is what the router needs of a deployment.
type Deployment struct {
	Request serving.RequestSettings
	// ScoringPath is where /endpoints/<name>/score goes on a replica (default /score).
	ScoringPath         string
	Liveness, Readiness serving.Probe
	Replicas            []Replica
}

// Replica is one replica as the controller knows it: Ready once its supervisor reported the
// port answering. The prober can still keep it out of the rotation.
type Replica struct {
	ID    string
	Addr  string // host:port
	Ready bool
	// Secret goes with every request to the replica, probes included (scoring.SecretHeader):
	// the replica answers nobody else.
	Secret string
}

// Load is a deployment's load as the autoscaler reads it.
type Load struct {
	InFlight    int
	Held        int // waiting for a slot or for a ready replica
	LastRequest time.Time
	Requests    int64 // since the router started
}

// Router is the endpoints' proxy; an http.Handler for /endpoints/.
type Router struct {
	cfg       Config
	log       *slog.Logger
	table     atomic.Pointer[table]
	mu        sync.Mutex // serializes Set; guards deps
	deps      map[depKey]*depState
	proxy     *httputil.ReverseProxy
	transport *http.Transport
	mirrors   chan struct{}
}

type depKey struct{ endpoint, deployment string }

// table is a Table compiled for the request path: read without locks.
type table struct {
	endpoints map[string]*route
}

type route struct {
	traffic, mirror map[string]int
	deps            map[string]*depState
}

// New returns a router with an empty table.
func New(cfg Config) *Router {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Authorize == nil {
		cfg.Authorize = func(string, string) bool { return false }
	}
	if cfg.Wake == nil {
		cfg.Wake = func(string, string) {}
	}
	if cfg.Unhealthy == nil {
		cfg.Unhealthy = func(string, string) {}
	}
	cfg.MaxBody = orDefault(cfg.MaxBody, DefaultMaxBody)
	cfg.HoldTimeout = orDefault(cfg.HoldTimeout, DefaultHoldTimeout)
	cfg.MaxHeld = orDefault(cfg.MaxHeld, DefaultMaxHeld)
	cfg.MaxMirrors = orDefault(cfg.MaxMirrors, DefaultMaxMirrors)
	cfg.ProbeTick = orDefault(cfg.ProbeTick, DefaultProbeTick)
	r := &Router{cfg: cfg, log: cfg.Log.With("component", "router"), deps: map[depKey]*depState{},
		mirrors: make(chan struct{}, cfg.MaxMirrors)}
	r.transport = &http.Transport{
		Proxy:               nil, // replicas are reached directly, never through HTTP_PROXY
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	r.proxy = r.newProxy()
	r.table.Store(&table{endpoints: map[string]*route{}})
	return r
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Close drops the router's idle connections to replicas.
func (r *Router) Close() { r.transport.CloseIdleConnections() }

// Set swaps the whole routing table: requests that arrive after it use the new one; requests
// already in flight finish where they are. A replica or deployment keeps its counts and probe
// state across tables as long as it is in them.
func (r *Router) Set(t Table) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Now()
	next := &table{endpoints: make(map[string]*route, len(t))}
	seen := map[depKey]bool{}
	for name, ep := range t {
		rt := &route{traffic: ep.Traffic, mirror: ep.Mirror, deps: make(map[string]*depState, len(ep.Deployments))}
		for dname, d := range ep.Deployments {
			k := depKey{name, dname}
			ds := r.deps[k]
			if ds == nil {
				ds = newDepState(name, dname)
				r.deps[k] = ds
			}
			ds.update(d, now)
			rt.deps[dname] = ds
			seen[k] = true
		}
		next.endpoints[name] = rt
	}
	for k, ds := range r.deps {
		if !seen[k] {
			ds.remove()
			delete(r.deps, k)
		}
	}
	r.table.Store(next)
}

// Load is a deployment's load now; the zero Load when it is not in the table.
func (r *Router) Load(endpoint, deployment string) Load {
	r.mu.Lock()
	ds := r.deps[depKey{endpoint, deployment}]
	r.mu.Unlock()
	if ds == nil {
		return Load{}
	}
	return ds.load()
}

func (r *Router) lookup(endpoint string) *route {
	return r.table.Load().endpoints[endpoint]
}

// allDeps is every deployment of the current table.
func (r *Router) allDeps() []*depState {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*depState, 0, len(r.deps))
	for _, ds := range r.deps {
		out = append(out, ds)
	}
	return out
}
