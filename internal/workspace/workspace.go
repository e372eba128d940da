package workspace

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// Workspace resolves jobs against the workspace and holds the CRUD of its nouns (New); it
// keeps no state of its own but the key rotation's lock.
type Workspace struct {
	Deps

	// The nouns' verbs (nouns.go).
	Models       *Models
	Data         *Data
	Components   *Components
	Computes     *Computes
	Datastores   *Datastores
	Environments *Environments
	Secrets      *Secrets
	Connections  *Connections

	rotating sync.Mutex // serialises key rotations (jobsecrets.go)
}

// Deps are what a Workspace works over (New).
type Deps struct {
	Store    Store
	Blobs    Blobs
	Backends map[string]backend.Backend // by compute type: which targets can run jobs, and their checks
	// Sealer seals compute and job secrets at rest.
	Sealer Sealer
	Log    *slog.Logger
	// Now is the clock.
	Now func() time.Time
	// LocalRuntime names the container runtime of this machine ("" when none), for local targets.
	LocalRuntime func() string
	// Runs is what a target's change asks of the run core; Instances, of compute instances.
	Runs      Runs
	Instances Instances
}

// Blobs is what the workspace reads and writes in the blob store (*blob.Store): whether an
// upload arrived, manifests read whole and written.
type Blobs interface {
	Has(hash string) bool
	Open(hash string) (*os.File, error)
	PutBytes(b []byte) (string, error)
}

// Runs is what the workspace asks of the run core when a compute target changes or goes.
type Runs interface {
	// Cancel asks for the end of a run (a Conflict error when it has ended).
	Cancel(ctx context.Context, id string) (*job.Run, error)
	// ForgetTarget drops what the run core learned of a target's answers: its spec changed, or it went.
	ForgetTarget(name string)
	// Kick asks the run core for a pass soon.
	Kick()
}

// Instances is what the CRUD of computes asks of compute instances.
type Instances interface {
	// Created starts an instance's life once its target is stored.
	Created(ctx context.Context, s compute.Spec) error
	// Deletable refuses to delete an instance target that may not go yet.
	Deletable(ctx context.Context, t *compute.Target) error
}

// MaxManifestBytes bounds a manifest the server reads whole (it came from a run token's upload):
// about 3.5 million files.
const MaxManifestBytes = 512 << 20

// ReadManifest reads the file-tree manifest stored as blob hash.
func ReadManifest(blobs interface {
	Open(hash string) (*os.File, error)
}, hash string) (*snapshot.Manifest, error) {
	f, err := blobs.Open(hash)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", hash, err)
	}
	if len(b) > MaxManifestBytes {
		return nil, Invalidf("manifest %s is over %d MiB (a tree of millions of files): collect fewer files", hash, MaxManifestBytes>>20)
	}
	return snapshot.Decode(b)
}

func (w *Workspace) readManifest(hash string) (*snapshot.Manifest, error) {
	return ReadManifest(w.Blobs, hash)
}
