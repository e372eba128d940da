package workspace

import (
	"context"
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/component"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// Store is what the workspace reads and writes in the store, one field per aggregate of it
// (*store.Store's fields; Settings is the store itself) or per versioned asset kind (Models,
// Data, Components): the workspace's own rows (the assets, Cluster's targets, Settings), and
// what it reads of others' or removes with a target.
type Store struct {
	Settings Settings
	Assets   Assets
	Models   VersionRows[model.Version]
	// Registry is the model registry's own rows (store.Assets): registered models, their tags,
	// aliases, stages, renames and deletes (models_registry.go).
	Registry   Registry
	Data       VersionRows[dataset.Version]
	Components VersionRows[component.Version]
	// Aliases are models' aliases (modelalias.go).
	Aliases   ModelAliasRows
	Cluster   Targets
	Runs      RunReader
	Instances interface {
		Delete(ctx context.Context, name string) error
	}
	Tracking interface {
		MLflowArtifactFiles(ctx context.Context, runID string, limit int) ([]store.MLflowArtifact, error)
		LoggedModel(ctx context.Context, id string) (*tracking.LoggedModel, error)
		LoggedModelArtifactFiles(ctx context.Context, modelID string, limit int) ([]store.MLflowArtifact, error)
	}
	Access interface {
		GetUser(ctx context.Context, name string) (*store.User, error)
	}
}

// Registry is what the model registry writes in the store (store.Assets), each write one
// transaction; its not-found and already-exists errors carry MLflow's words.
type Registry interface {
	CreateRegisteredModel(ctx context.Context, m store.RegisteredModel, tags []store.RegisteredModelTag) error
	SetRegisteredModelDescription(ctx context.Context, name, description string, now time.Time) error
	SetRegisteredModelTag(ctx context.Context, t store.RegisteredModelTag) error
	DeleteRegisteredModelTag(ctx context.Context, name, key string) error
	UpdateModelMeta(ctx context.Context, name, version string, edit func(m *asset.Meta)) (*model.Version, error)
	SetModelAlias(ctx context.Context, a store.ModelAlias) error
	DeleteModelAlias(ctx context.Context, name, alias string) error
	TransitionModelStage(ctx context.Context, name, version, stage string, archiveOthers bool) (*model.Version, error)
	RenameModel(ctx context.Context, from, to string) error
	DeleteModel(ctx context.Context, name, version string, at time.Time) error
}

// Settings are the workspace's key-value settings (a default compute, curated environments).
type Settings interface {
	Setting(ctx context.Context, key string) (value string, ok bool, err error)
	Settings(ctx context.Context, prefix string) (map[string]string, error)
	SetSetting(ctx context.Context, key, value string) error
	DeleteSetting(ctx context.Context, key string) error
}

// Assets are environments, datastores and job secrets (store.Assets).
type Assets interface {
	CreateEnvironment(ctx context.Context, e store.EnvironmentVersion) (*store.EnvironmentVersion, error)
	Environment(ctx context.Context, name, version string) (*store.EnvironmentVersion, error)
	Environments(ctx context.Context, name string) ([]store.EnvironmentVersion, error)

	PutDatastore(ctx context.Context, d datastore.Datastore, sealed string) error
	Datastore(ctx context.Context, name string) (*datastore.Datastore, error)
	Datastores(ctx context.Context) ([]datastore.Datastore, error)
	DatastoreCredentials(ctx context.Context, name string) (sealed string, err error)
	DeleteDatastore(ctx context.Context, name string) error
	MarkDatastoresUsed(ctx context.Context, names []string, run string, at time.Time) error
	PutDatastorePath(ctx context.Context, e datastore.Entry) error
	DatastorePaths(ctx context.Context, ds string, paths []string) ([]datastore.Entry, error)

	PutJobSecret(ctx context.Context, name, sealed string, access *store.SecretAccess, at time.Time) (created bool, err error)
	SetJobSecretAccess(ctx context.Context, name string, access store.SecretAccess) error
	JobSecrets(ctx context.Context) ([]store.JobSecret, error)
	DeleteJobSecret(ctx context.Context, name string) error
	MarkJobSecretsUsed(ctx context.Context, names []string, run string, at time.Time) error
	Reseal(ctx context.Context, r store.Resealer) (changed int, err error)

	PutConnection(ctx context.Context, c store.StoredConnection) error
	Connection(ctx context.Context, name string) (*store.StoredConnection, error)
	Connections(ctx context.Context) ([]store.StoredConnection, error)
	DeleteConnection(ctx context.Context, name string) error
}

// Targets are compute targets and serverless pools (store.Cluster).
type Targets interface {
	PutCompute(ctx context.Context, t compute.Target) error
	Compute(ctx context.Context, name string) (*compute.Target, error)
	Computes(ctx context.Context) ([]compute.Target, error)
	DeleteCompute(ctx context.Context, name string) error
}

// RunReader is what the workspace reads of runs (store.Runs): a producer's outputs, the runs on
// a target that goes.
type RunReader interface {
	Run(ctx context.Context, id string) (*job.Run, error)
	List(ctx context.Context, f store.RunFilter) ([]*job.Run, error)
}
