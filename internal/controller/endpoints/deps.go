package endpoints

import (
	"context"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/store"
)

// Runs is what serving asks of the run core: a replica is a run it queues and cancels, a batch
// invoke a job it creates, and a change of a replica's run wakes the serving loop.
type Runs interface {
	// Queue queues a command job Hangar made (a replica), which Create would refuse.
	Queue(ctx context.Context, sp job.Spec) (*job.Run, error)
	Create(ctx context.Context, req api.CreateJobRequest) (*job.Run, error)
	Cancel(ctx context.Context, id string) (*job.Run, error)
	OnChange(fn func(runID string))
}

// Resolver is what serving asks of the workspace: a deployment's model, target and environment
// resolved, and refused when its replicas or jobs could not run, before anything is stored.
type Resolver interface {
	ResolveModel(ctx context.Context, ref string) (*model.Version, error)
	// ModelAliasVersion is the version a model's alias names now (NotFound when not set).
	ModelAliasVersion(ctx context.Context, name, alias string) (string, error)
	ResolveCompute(ctx context.Context, name string) (*compute.Target, error)
	ResolveEnvironment(ctx context.Context, sp *job.Spec) ([]string, error)
	CheckForTarget(sp job.Spec, t *compute.Target) ([]string, error)
	// CheckSecretRefs refuses the secrets sp names that user by may not use.
	CheckSecretRefs(ctx context.Context, by string, sp *job.Spec) error
	Datastore(ctx context.Context, name string) (*datastore.Datastore, error)
}

// Store is what serving reads and writes in the store: its endpoints, deployments and replicas
// (Serving), and the runs and targets of replicas, read only; each field is one of the store's
// aggregates.
type Store struct {
	Serving Rows
	Runs    interface {
		Run(ctx context.Context, id string) (*job.Run, error)
	}
	Cluster interface {
		Compute(ctx context.Context, name string) (*compute.Target, error)
	}
}

// Rows are serving's own rows: online and batch endpoints, their deployments, and online
// deployments' replicas (store.Serving).
type Rows interface {
	PutEndpoint(ctx context.Context, e store.EndpointRecord, create bool) error
	Endpoint(ctx context.Context, name string) (*store.EndpointRecord, error)
	Endpoints(ctx context.Context) ([]store.EndpointRecord, error)
	DeleteEndpoint(ctx context.Context, name string) error

	PutDeployment(ctx context.Context, d store.DeploymentRecord, create bool) (*store.DeploymentRecord, error)
	SetDeploymentState(ctx context.Context, endpoint, name, state, reason, lastFailed string) error
	Deployment(ctx context.Context, endpoint, name string) (*store.DeploymentRecord, error)
	Deployments(ctx context.Context, endpoint string) ([]store.DeploymentRecord, error)
	DeleteDeployment(ctx context.Context, endpoint, name string) error

	AddReplica(ctx context.Context, r store.Replica) error
	SetReplicaAddress(ctx context.Context, runID, address string) error
	DeleteReplica(ctx context.Context, runID string) error
	Replicas(ctx context.Context) ([]store.Replica, error)

	PutBatchEndpoint(ctx context.Context, e store.BatchEndpointRecord, create bool) error
	BatchEndpoints(ctx context.Context) ([]store.BatchEndpointRecord, error)
	BatchEndpoint(ctx context.Context, name string) (*store.BatchEndpointRecord, error)
	DeleteBatchEndpoint(ctx context.Context, name string) error
	PutBatchDeployment(ctx context.Context, d store.BatchDeploymentRecord, create bool) error
	BatchDeployment(ctx context.Context, endpoint, name string) (*store.BatchDeploymentRecord, error)
	BatchDeployments(ctx context.Context, endpoint string) ([]store.BatchDeploymentRecord, error)
	DeleteBatchDeployment(ctx context.Context, endpoint, name string) error
}

// Sealer seals endpoints' keys at rest (the workspace's secret box).
type Sealer interface {
	Encrypt(plaintext []byte) (string, error)
	Decrypt(ciphertext string) ([]byte, error)
}
