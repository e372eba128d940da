package server

import (
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/store"
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
	// Serving routes requests to online endpoints (/endpoints/...); nil: none are served.
	Serving *Serving
}

// Server serves the workspace API.
type Server struct {
	cfg    Config
	hub    *hub
	exec   *execRelay
	budget *budget
	tel    *telemetry
	log    *slog.Logger
	studio *studioAuth // set by Handler
}

// New returns a server; it subscribes its waiters to run changes.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, hub: newHub(), exec: newExecRelay(), budget: newBudget(BodyMemoryBudget, budgetWait), log: cfg.Log}
	s.tel = newTelemetry(cfg.Store, cfg.Log)
	if cfg.Serving != nil {
		s.tel.reg.MustRegister(cfg.Serving.Router)
	}
	cfg.Controller.OnChange(s.hub.notify)
	return s
}

// Handler is the HTTP handler of the whole API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/health", s.health)

	api := http.NewServeMux()
	api.HandleFunc("GET /api/computes", adminOnly(s.listComputes))
	api.HandleFunc("GET /api/computes/{name}", adminOnly(s.getCompute))
	api.HandleFunc("POST /api/computes", adminOnly(s.createCompute))
	api.HandleFunc("PUT /api/computes/{name}", adminOnly(s.updateCompute))
	api.HandleFunc("DELETE /api/computes/{name}", adminOnly(s.deleteCompute))

	api.HandleFunc("POST /api/blobs/missing", s.missingBlobs)
	api.HandleFunc("PUT /api/blobs/{hash}", s.putBlob)
	api.HandleFunc("POST /api/blobs/bundle", s.putBundle)
	api.HandleFunc("GET /api/blobs/{hash}", s.getBlob)

	api.HandleFunc("GET /api/settings", adminOnly(s.listSettings))
	api.HandleFunc("PUT /api/settings/{key}", adminOnly(s.putSetting))
	api.HandleFunc("POST /api/environments", adminOnly(s.createEnvironment))
	api.HandleFunc("GET /api/environments", adminOnly(s.listEnvironments))
	api.HandleFunc("GET /api/environments/{name}/versions/{version}", adminOnly(s.getEnvironment))
	api.HandleFunc("POST /api/models", adminOnly(s.createModel))
	api.HandleFunc("GET /api/models", adminOnly(s.listModels))
	api.HandleFunc("GET /api/models/{name}/versions/{version}", adminOnly(s.getModel))
	api.HandleFunc("POST /api/models/{name}/archive", adminOnly(s.archiveModel))
	api.HandleFunc("POST /api/models/{name}/restore", adminOnly(s.restoreModel))
	s.dataRoutes(api)
	s.componentRoutes(api)

	api.HandleFunc("POST /api/jobs", adminOnly(s.createJob))
	api.HandleFunc("GET /api/jobs", adminOnly(s.listJobs))
	api.HandleFunc("GET /api/jobs/{name}", adminOnly(s.getJob))
	api.HandleFunc("POST /api/jobs/{name}/cancel", adminOnly(s.cancelJob))
	api.HandleFunc("GET /api/jobs/{name}/logs", adminOnly(s.jobLogs))
	api.HandleFunc("GET /api/jobs/{name}/metrics", adminOnly(s.jobMetrics))
	api.HandleFunc("GET /api/jobs/{name}/trials", adminOnly(s.jobTrials))
	api.HandleFunc("GET /api/jobs/{name}/steps", adminOnly(s.jobSteps))
	api.HandleFunc("GET /api/jobs/{name}/artifacts", adminOnly(s.jobArtifacts))

	api.HandleFunc("GET /api/runs/{id}/spec", s.runOnly(s.runSpec))
	api.HandleFunc("POST /api/runs/{id}/status", s.runOnly(s.runStatus))
	api.HandleFunc("POST /api/runs/{id}/heartbeat", s.runOnly(s.runHeartbeat))
	api.HandleFunc("POST /api/runs/{id}/logs", s.runOnly(s.runLogs))
	api.HandleFunc("POST /api/runs/{id}/metrics", s.runOnly(s.runMetrics))
	api.HandleFunc("POST /api/runs/{id}/artifacts", s.runOnly(s.runArtifacts))
	api.HandleFunc("POST /api/runs/{id}/checkpoint", s.runOnly(s.runCheckpoint))
	api.HandleFunc("GET /api/runs/{id}/container-log", s.runOnly(s.runContainerLog))
	api.HandleFunc("POST /api/runs/{id}/exec", s.runOnly(s.execCreate))
	api.HandleFunc("GET /api/runs/{id}/exec", s.runOnly(s.execTake))
	api.HandleFunc("GET /api/runs/{id}/exec/{eid}", s.runOnly(s.execGet))
	api.HandleFunc("POST /api/runs/{id}/exec/{eid}/done", s.runOnly(s.execDone))
	s.agentRoutes(api)
	s.instanceRoutes(api)
	s.mlflowArtifactRoutes(api)
	s.jobListRoutes(api)
	s.mlflowRoutes(mux, api)
	s.agentPublicRoutes(mux)
	s.studioRoutes(mux, api)
	s.endpointRoutes(api)
	s.batchRoutes(api)
	s.secretRoutes(api) // jobsecrets.go
	mux.Handle("/api/", s.authenticate(api))
	// Prometheus scrapes with the workspace token (authorization.credentials_file).
	mux.Handle("GET /metrics", s.authenticate(adminOnly(s.tel.handler().ServeHTTP)))
	route := func(r *http.Request) string {
		_, p := mux.Handler(r)
		if p == "/api/" {
			_, p = api.Handler(r)
		}
		return p
	}
	logged := s.logRequests(s.limitBodies(mux, route), route)
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

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, api.Health{OK: true, Version: api.Version, Workspace: s.cfg.Workspace, PID: os.Getpid()})
}

// logRequests logs each request at debug level, and failures at info, and times it by route.
func (s *Server) logRequests(h http.Handler, route func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK, workspace: s.cfg.Workspace}
		h.ServeHTTP(rec, r)
		s.tel.observe(route(r), rec.status, time.Since(start))
		level := slog.LevelDebug
		if rec.status >= 500 {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "http", "method", r.Method, "path", r.URL.Path, "status", rec.status,
			"bytes", r.ContentLength, "took", time.Since(start))
	})
}

// statusRecorder records a response's status; it also carries the workspace directory, for
// error messages that say where the disk is full.
type statusRecorder struct {
	http.ResponseWriter
	status    int
	workspace string
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
