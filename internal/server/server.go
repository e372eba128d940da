package server

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/controller/endpoints"
	"github.com/hangar-ml/hangar/internal/controller/instances"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tick"
)

// Config is what the server is made of.
type Config struct {
	Store      *store.Store
	Blobs      *blob.Store
	Controller *controller.Controller
	Backends   map[string]backend.Backend
	// Clusters runs managed clusters: its agents' routes and nodes (nil: none; the agent
	// routes then answer 404).
	Clusters *cluster.Backend
	// AdminToken authenticates the CLI; empty disables authentication (tests only).
	AdminToken string
	// URL is the server's own address, given to runs as HANGAR_WORKSPACE_URL.
	URL       func() string
	Workspace string
	Log       *slog.Logger
	// MaxBlobBytes caps one uploaded blob; zero means MaxBlobBytes.
	MaxBlobBytes int64
	// BodyTimeout is how long a JSON body may take to arrive and an upload may stall; zero
	// means a minute.
	BodyTimeout time.Duration
	// Serving owns online and batch endpoints: their routes call it, and requests to online
	// endpoints (/endpoints/...) go to its router; nil: none are served.
	Serving *endpoints.Serving
	// Instances owns compute instances: their routes (start, stop, show) and the Jupyter and SSH
	// lookups call it.
	Instances *instances.Manager
	// OIDC turns on the studio's OpenID Connect login (oidc.go); nil: off.
	OIDC *OIDC
	// Role, when set, says the server's role among a replicated workspace's servers and the
	// leader's address, for the health check (design 0020).
	Role func() (role, leader string)
	// Servers, when set, lists the workspace's servers for nodes and supervisors (run specs and
	// heartbeat replies carry it).
	Servers func() string
}

// Server serves the workspace API.
type Server struct {
	cfg    Config
	hub    tick.Changes[string] // a run's next change, for long polls (logs, status)
	exec   *execRelay
	budget *budget
	tel    *telemetry
	log    *slog.Logger
	studio *studioAuth // set by Handler
	oidc   *oidcFlow   // set by Handler when Config.OIDC is
	mlflow *mlflowapi.API
	groups
	// table is every route Handler registered, with its access (access.go).
	table []route
}

// New returns a server; it subscribes its waiters to run changes.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, exec: newExecRelay(), budget: newBudget(BodyMemoryBudget, budgetWait), log: cfg.Log}
	s.tel = newTelemetry(cfg.Store, cfg.Log)
	if cfg.Serving != nil {
		s.tel.reg.MustRegister(cfg.Serving.Router)
	}
	s.groups = newGroups(s)
	s.mlflow = s.newMLflow()
	cfg.Controller.OnChange(s.hub.Changed)
	return s
}

// Handler is the HTTP handler of the whole API.
func (s *Server) Handler() http.Handler {
	s.table = nil
	outer, apiMux := http.NewServeMux(), http.NewServeMux()
	mux, api := routes{s: s, mux: outer, authenticate: true}, routes{s: s, mux: apiMux}
	mux.handle("GET /api/health", publicAccess, s.health)
	for _, g := range []interface{ routes(mux, api routes) }{s.computes, s.blobs, s.secrets, s.assets, s.jobs, s.runs,
		s.cluster, s.instances, s.endpoints, s.batch, s.identity} {
		g.routes(mux, api)
	}
	s.mlflowRoutes(mux, api)

	// The API mux is authenticated as a whole; its routes check their access.
	outer.Handle("/api/", s.authenticate(apiMux))
	// Prometheus scrapes with the workspace token (authorization.credentials_file).
	mux.handle("GET /metrics", readAccess, s.tel.handler().ServeHTTP)
	route := func(r *http.Request) string {
		_, p := outer.Handler(r)
		if p == "/api/" {
			_, p = apiMux.Handler(r)
		}
		return p
	}
	logged := s.logRequests(s.limitBodies(outer, route), route)
	if s.cfg.Serving == nil {
		return logged
	}
	// Requests to endpoints go to the router, which bounds their bodies, authenticates them with
	// the endpoint's key and counts them itself (per deployment, in /metrics).
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/endpoints/") {
			s.cfg.Serving.ServeHTTP(w, r)
			return
		}
		logged.ServeHTTP(w, r)
	})
}

// HTTPServer returns the http.Server for a handler. Headers must arrive within 10 s and stay
// small; an idle keep-alive connection is closed after 2 min. There is no ReadTimeout or
// WriteTimeout: a whole-request deadline would cut large uploads and long polls (a log wait
// answers after up to a minute). Bodies get their own deadlines instead (limitBodies).
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10}
}

// logRequests logs each request at debug level, and failures at info, and times it by route.
func (s *Server) logRequests(h http.Handler, route func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK, workspace: s.cfg.Workspace}
		body := &countingBody{ReadCloser: r.Body}
		if r.Body != nil && r.Body != http.NoBody { // a request without a body keeps http.NoBody (bodies.go, audit.go)
			r.Body = body
		}
		h.ServeHTTP(rec, r)
		s.tel.observe(route(r), rec.status, time.Since(start), body.n.Load(), rec.written)
		level := slog.LevelDebug
		if rec.status >= 500 {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "http", "method", r.Method, "path", r.URL.Path, "status", rec.status,
			"bytes", r.ContentLength, "took", time.Since(start))
	})
}

// statusRecorder records a response's status and how many body bytes were written; it also
// carries the workspace directory, for error messages that say where the disk is full.
type statusRecorder struct {
	http.ResponseWriter
	status    int
	written   int64
	workspace string
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	n, err := r.ResponseWriter.Write(p)
	r.written += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (for body deadlines).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// workspaceOf returns the workspace directory a response is written for ("" when unknown).
func workspaceOf(w http.ResponseWriter) string {
	for {
		switch t := w.(type) {
		case *statusRecorder:
			return t.workspace
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return ""
		}
	}
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
