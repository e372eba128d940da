package endpoints

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/router"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tick"
	"github.com/hangar-ml/hangar/internal/tokens"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// Serving owns online and batch endpoints: their verbs, the serving loop and the router.
type Serving struct {
	store   Store
	runs    Runs
	resolve Resolver
	secrets Sealer
	key     []byte // the workspace's token key: endpoints' aml_tokens, replicas' secrets
	now     func() time.Time
	log     *slog.Logger

	// Router answers /endpoints/...: the serving loop publishes its table.
	Router *router.Router
	// publish hands a pass's table to the router (tests record it).
	publish func(router.Table)
	// auth is each endpoint's auth mode and keys, published with the router's table.
	auth atomic.Pointer[map[string]endpointAuth]
	memo memo

	loadMu  sync.Mutex
	samples map[serving.Key][]serving.LoadSample
}

// Deps are what New needs: the dependencies (deps.go), the workspace's token key, the clock
// and the log.
type Deps struct {
	Store    Store
	Runs     Runs
	Resolver Resolver
	Secrets  Sealer
	Key      []byte
	Now      func() time.Time
	Log      *slog.Logger
}

// New makes the endpoints' owner and its router (rc's callbacks are set here: a key check
// against the published keys, a wake of the serving loop, an unhealthy replica's stop).
func New(d Deps, rc router.Config) *Serving {
	s := &Serving{store: d.Store, runs: d.Runs, resolve: d.Resolver, secrets: d.Secrets, key: d.Key,
		now: d.Now, log: d.Log, samples: map[serving.Key][]serving.LoadSample{}}
	if s.now == nil {
		s.now = func() time.Time { return time.Now().UTC() }
	}
	s.memo.kick = tick.NewKick()
	empty := map[string]endpointAuth{}
	s.auth.Store(&empty)
	rc.Authorize = s.authorize
	rc.Wake = func(string, string) { s.Wake() }
	rc.Unhealthy = s.unhealthy
	s.Router = router.New(rc)
	s.publish = s.Router.Set
	s.runs.OnChange(s.replicaChanged)
	return s
}

func (s *Serving) endpointTokens() tokens.Endpoint { return tokens.Endpoint{Key: s.key} }

func (s *Serving) replicaSecrets() tokens.Replica { return tokens.Replica{Key: s.key} }

// The constructors of an Error are the workspace's (controller.Error is workspace.Error).
var (
	invalidf  = workspace.Invalidf
	notFoundf = workspace.NotFoundf
	conflictf = workspace.Conflictf
)

// notFound says the store's missing row as a NotFound error (format, a); other errors, and
// nil, are as they are.
func notFound(err error, format string, a ...any) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFoundf(format, a...)
	}
	return err
}

// putErr says a store put's refusals: a row that exists (a create) as a Conflict saying exists,
// a missing row (a replace) as a NotFound saying missing.
func putErr(err error, exists, missing string) error {
	if errors.Is(err, store.ErrExists) {
		return conflictf("%s", exists)
	}
	return notFound(err, "%s", missing)
}
