package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// Handle is a backend's serialisable reference to a submitted run, stored with the run so that a
// restarted server re-attaches to it.
type Handle = json.RawMessage

// Launch is everything a backend needs to start a run's supervisor.
type Launch struct {
	RunID  string
	Token  string // the run's own token, for the supervisor to talk back
	Target compute.Target
	Spec   job.Spec
	// Attempt is the run's attempt (1 unless it was requeued); Placement is where a Placer put
	// it (nil on backends that do not place runs).
	Attempt   int
	Placement *job.Placement
}

// Manifests are the blob manifests a run reads (its code snapshot, then its inputs'), for
// backends that seed a host's cache before the supervisor starts.
func (l Launch) Manifests() []string {
	var out []string
	if l.Spec.CodeSnapshot != "" {
		out = append(out, l.Spec.CodeSnapshot)
	}
	for _, name := range slices.Sorted(maps.Keys(l.Spec.Inputs)) {
		if m := l.Spec.Inputs[name].Manifest; m != "" {
			out = append(out, m)
		}
	}
	return out
}

// Status is a backend's view of a submitted run.
type Status struct {
	// Alive is true while the supervisor (or the engine's job) still exists.
	Alive bool
	// Final is set when the run ended and its result could be read where it ran.
	Final *job.Result
	// Reason explains the status (an engine's pending reason, why it is gone).
	Reason string
}

// ErrBadHandle is what Status, Cancel (and Pending) return, wrapped, for a handle this backend
// did not hand out: not JSON, another backend's, or naming nothing of this backend's.
var ErrBadHandle = errors.New("not a handle of this backend")

// DecodeHandle decodes h into v, a backend's handle struct, refusing anything that is not
// exactly such a handle (fields of another backend's handle are not ignored). The backend still
// checks that the fields it needs are set.
func DecodeHandle(h Handle, v any) error {
	dec := json.NewDecoder(bytes.NewReader(h))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %q: %v", ErrBadHandle, clip(h), err)
	}
	if dec.More() {
		return fmt.Errorf("%w: %q: trailing data", ErrBadHandle, clip(h))
	}
	return nil
}

// clip shortens a handle for an error message.
func clip(h Handle) string {
	if len(h) > 120 {
		return string(h[:120]) + "..."
	}
	return string(h)
}

// Backend starts and stops supervisors on one kind of compute target.
// Every method may be called again with the same arguments (after a restart) and must be idempotent.
// internal/backend/backendtest's conformance suite checks every backend against this contract.
type Backend interface {
	// Submit starts the run's supervisor and returns its handle.
	Submit(ctx context.Context, l Launch) (Handle, error)
	// Status reports what the target knows of the run.
	Status(ctx context.Context, h Handle) (Status, error)
	// Cancel asks the supervisor to stop the run (it still collects outputs and logs).
	Cancel(ctx context.Context, h Handle) error
}

// Describer is an optional capability: a backend that can describe a target's node(s).
type Describer interface {
	Describe(ctx context.Context, t compute.Target) (*compute.NodeInfo, error)
}

// Attacher is an optional capability: a backend that verifies a target before it is stored
// (connects, checks the host, detects its node) and may complete its spec (e.g. pin a host key).
type Attacher interface {
	Attach(ctx context.Context, s *compute.Spec) (*compute.NodeInfo, error)
}

// Pender is an optional capability of backends whose engine keeps its own queue (Slurm): a
// submitted run may wait there before its supervisor starts. Pending reports whether it still
// waits and why, in the engine's words. The controller asks every tick while such a run is Queued (a Notifier: when told),
// shows the reason as the run's status reason, and expects no heartbeat while it waits.
type Pender interface {
	Pending(ctx context.Context, h Handle) (reason string, pending bool, err error)
}

// Notifier is an optional capability of a Pender whose engine says when a run's state there
// changed (Kubernetes' watches): the controller then asks about a waiting or canceled run when
// told, and on its periodic full pass, instead of every tick. Notify is called once, before the
// controller's loop starts; the backend calls fn with a run's id (from any goroutine, never
// blocking on it) whenever that run's objects in the engine change.
type Notifier interface {
	Pender
	Notify(fn func(runID string))
}

// ContainerLogger is an optional capability of backends that run a replica's own image where
// its supervisor cannot read the image's output (Kubernetes: the pod's main container, beside
// the supervisor's sidecar). ContainerLog returns the lines written after since, each
// "<RFC 3339 time> <text>", following new ones for up to follow (0: what is there now); no lines
// while the container has not started. The supervisor relays them into the run's log.
type ContainerLogger interface {
	ContainerLog(ctx context.Context, h Handle, since time.Time, follow time.Duration) (io.ReadCloser, error)
}
