package mlflowapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// API serves MLflow's tracking REST API and the mlflow-artifacts proxy. The server mounts it
// (Routes) behind its own authentication and access checks.
type API struct {
	cfg Config
	log *slog.Logger
}

// Config is what the API is made of: the store aggregates it reads and writes, the blobs of
// uploaded artifacts, and what it asks of the server (who the caller is, how bodies are read).
type Config struct {
	Tracking  Tracking
	Artifacts Artifacts
	Runs      Runs
	RunWriter RunWriter
	Blobs     Blobs
	// Models are the workspace's models, which MLflow's registry routes show.
	Models Models
	// Registry makes the registry's writes (the workspace's models, their one writer).
	Registry Registry
	// Webhooks are the registry's webhooks (webhook.Service).
	Webhooks Webhooks
	// Caller says who sent a request: the workspace (any user's token) or a run's token.
	Caller func(r *http.Request) Caller
	Bodies Bodies
	// MetricPoints counts the metric points logged (nil: not counted).
	MetricPoints interface{ Add(float64) }
	// Workspace is the workspace directory, where multipart uploads keep their parts ("": no
	// multipart uploads).
	Workspace string
	Log       *slog.Logger

	// LoggedModels are MLflow 3's logged models, with their files.
	LoggedModels LoggedModels
}

// New returns the API over cfg.
func New(cfg Config) *API {
	if cfg.MetricPoints == nil {
		cfg.MetricPoints = noCount{}
	}
	return &API{cfg: cfg, log: cfg.Log}
}

type noCount struct{}

func (noCount) Add(float64) {}

// Caller is who sent a request, as the server authenticated it.
type Caller struct {
	// Admin: a user's or the workspace's token, which may touch any run.
	Admin bool
	// RunID is the run whose token it is ("" for a user).
	RunID string
}

// Tracking is the store's experiments and the tracking side of runs (params, metrics, tags,
// inputs).
type Tracking interface {
	CreateExperiment(ctx context.Context, name, artifactLocation string, tags []tracking.KV) (string, error)
	Experiment(ctx context.Context, id string) (*tracking.Experiment, error)
	ExperimentByName(ctx context.Context, name string) (*tracking.Experiment, error)
	SearchExperiments(ctx context.Context, q store.ExperimentQuery) ([]*tracking.Experiment, bool, error)
	RenameExperiment(ctx context.Context, id, name string) error
	SetExperimentStage(ctx context.Context, id, stage string) error
	SetExperimentTag(ctx context.Context, id string, t tracking.KV) error
	TrackingRun(ctx context.Context, id string) (*tracking.Run, error)
	SearchRuns(ctx context.Context, q store.RunQuery) ([]*tracking.Run, bool, error)
	LogInputs(ctx context.Context, id string, inputs []tracking.DatasetInput) error
	MetricHistory(ctx context.Context, id, key string, offset, limit int) ([]tracking.MetricPoint, bool, error)
}

// Artifacts is the store's index of the files logged through the proxy.
type Artifacts interface {
	PutMLflowArtifact(ctx context.Context, a store.MLflowArtifact) error
	MLflowArtifact(ctx context.Context, runID, p string) (*store.MLflowArtifact, error)
	MLflowArtifactChildren(ctx context.Context, runID, dir, after string, limit int) ([]store.ArtifactEntry, error)
	DeleteMLflowArtifacts(ctx context.Context, runID, p string) (int64, error)
}

// LoggedModels is the store's MLflow 3 logged models (mlflowloggedmodels.go) and their files.
type LoggedModels interface {
	CreateLoggedModel(ctx context.Context, m *tracking.LoggedModel, at time.Time) error
	LoggedModel(ctx context.Context, id string) (*tracking.LoggedModel, error)
	LoggedModels(ctx context.Context, q store.LoggedModelQuery) ([]*tracking.LoggedModel, error)
	SetLoggedModelStatus(ctx context.Context, id string, status int, message string) error
	DeleteLoggedModel(ctx context.Context, id string) error
	SetLoggedModelTags(ctx context.Context, id string, tags []tracking.KV) error
	DeleteLoggedModelTag(ctx context.Context, id, key string) error
	LogLoggedModelParams(ctx context.Context, id string, params []tracking.KV) error
	LogLoggedModelMetrics(ctx context.Context, points []tracking.ModelMetric) error
	LogRunModels(ctx context.Context, runID, direction string, models []tracking.ModelIO) error
	PutLoggedModelArtifact(ctx context.Context, modelID string, a store.MLflowArtifact) error
	LoggedModelArtifact(ctx context.Context, modelID, p string) (*store.MLflowArtifact, error)
	LoggedModelArtifactChildren(ctx context.Context, modelID, dir, after string, limit int) ([]store.ArtifactEntry, error)
	DeleteLoggedModelArtifacts(ctx context.Context, modelID, p string) (int64, error)
}

// Runs reads runs.
type Runs interface {
	Run(ctx context.Context, id string) (*job.Run, error)
}

// RunWriter makes the changes to runs that MLflow's clients ask for (create, update status and
// end time, soft-delete and restore, log a batch, delete a tag): the run core, the one writer of
// run state.
type RunWriter interface {
	LogBatch(ctx context.Context, id string, b store.Batch) error
	DeleteRunTag(ctx context.Context, id, key string) error
	CreateTrackingRun(ctx context.Context, r *job.Run, expID, userID string, tags []tracking.KV) error
	UpdateTrackingRun(ctx context.Context, id string, u tracking.Update) error
	SetRunStage(ctx context.Context, id, stage string) error
}

// Blobs is the content-addressed blob store the uploaded files live in.
type Blobs interface {
	Put(r io.Reader, want string) (hash string, size int64, err error)
	Open(hash string) (*os.File, error)
}

// Bodies is how the server reads request bodies, within each route's limits, and which of its
// errors are the client's.
type Bodies interface {
	// ReadJSON decodes a request's JSON body.
	ReadJSON(r *http.Request, v any) error
	// MaxBlob is the largest upload, in bytes.
	MaxBlob() int64
	// TooLarge is the error of a body of size bytes over limit.
	TooLarge(route string, limit, size int64) error
	// BodyError says the status and message of an error reading a body (too large, too slow,
	// cut short, the server busy); ok is false for any other error.
	BodyError(err error) (status int, msg string, ok bool)
	// RequestError says the status and message of the server's typed request errors (a
	// malformed body, ...); ok is false for any other error.
	RequestError(err error) (status int, msg string, ok bool)
}

// Access is what one of the API's routes needs of its caller.
type Access struct {
	// Contribute: a role that submits jobs; else every role may call it.
	Contribute bool
	// Runs: a run's token may call it too (the handler keeps it to its own run).
	Runs bool
	// Owner: owners only (webhooks: the server sends requests where they say).
	Owner bool
	// Audit names the action an answered 2xx request writes to the audit log ("" none).
	Audit string
}

func (a Access) audited(action string) Access {
	a.Audit = action
	return a
}

var (
	readAccess            = Access{}
	readOrRunAccess       = Access{Runs: true}
	contributeAccess      = Access{Contribute: true}
	contributeOrRunAccess = Access{Contribute: true, Runs: true}
	ownerAccess           = Access{Owner: true}
)

// Mux is where the server registers the API's routes, each behind a check of its access.
type Mux interface {
	Handle(pattern string, a Access, h http.HandlerFunc)
}

// Routes registers the tracking API, the artifacts proxy and MLflow REST's ListArtifacts on mux.
func (s *API) Routes(mux Mux) {
	s.mlflowRoutes(mux)
	s.mlflowArtifactRoutes(mux)
	reg := &registry{api: s, cfg: s.cfg}
	reg.registryRoutes(mux)
	reg.registryCreateRoutes(mux)
	reg.downloadURIRoutes(mux)
	reg.registryUpdateRoutes(mux)
	reg.aliasRoutes(mux)
	reg.stageRoutes(mux)
	reg.webhookRoutes(mux)
	reg.deleteRoutes(mux)
	(&loggedModels{api: s, cfg: s.cfg}).routes(mux)
	s.notFoundRoutes(mux)
}
