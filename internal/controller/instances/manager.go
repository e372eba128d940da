package instances

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// Runs is what compute instances ask of the run core: a setup script is a run it queues, a
// stop cancels the instance's runs, and a change of an instance's wants wakes the run loop
// (its Placer starts or releases the node).
type Runs interface {
	// Queue queues a command job Hangar made (a setup script).
	Queue(ctx context.Context, sp job.Spec) (*job.Run, error)
	Cancel(ctx context.Context, id string) (*job.Run, error)
	Kick()
}

// Store is what compute instances read and write in the store: their rows, their targets and
// nodes, and the runs on them (read only); each field is one of the store's aggregates.
type Store struct {
	Instances Rows
	Cluster   Cluster
	Runs      RunReader
}

// Rows are the instances' own rows (store.Instances).
type Rows interface {
	Get(ctx context.Context, name string) (store.Instance, error)
	List(ctx context.Context) ([]store.Instance, error)
	Update(ctx context.Context, name string, fn func(in *store.Instance) (bool, error)) (store.Instance, error)
}

// Cluster is what instances read of targets and nodes (store.Cluster).
type Cluster interface {
	Compute(ctx context.Context, name string) (*compute.Target, error)
	Nodes(ctx context.Context, f store.NodeFilter) ([]*store.Node, error)
}

// RunReader is what instances read of runs (store.Runs).
type RunReader interface {
	Run(ctx context.Context, id string) (*job.Run, error)
	List(ctx context.Context, f store.RunFilter) ([]*job.Run, error)
}

// Sealer seals Jupyter's tokens at rest (the workspace's secret box).
type Sealer interface {
	Encrypt(plaintext []byte) (string, error)
	Decrypt(ciphertext string) ([]byte, error)
}

// Manager owns compute instances' lives: the user's verbs, what the cluster backend and the
// agents' dispatcher ask, and the instance loop.
type Manager struct {
	store   Store
	runs    Runs
	secrets Sealer
	now     func() time.Time
	log     *slog.Logger
}

// New makes the instances' owner over its dependencies; now nil means the wall clock (UTC).
func New(st Store, runs Runs, secrets Sealer, now func() time.Time, log *slog.Logger) *Manager {
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	return &Manager{store: st, runs: runs, secrets: secrets, now: now, log: log}
}

// The constructors of an Error are the workspace's (controller.Error is workspace.Error).
var (
	invalidf  = workspace.Invalidf
	conflictf = workspace.Conflictf
)

func isConflict(err error) bool {
	var e *controller.Error
	return errors.As(err, &e) && e.Kind == controller.Conflict
}

// mapStoreErr types the store's not-found for the API.
func mapStoreErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &controller.Error{Kind: controller.NotFound, Msg: err.Error()}
	}
	return err
}
