package backend

import (
	"context"
	"encoding/json"
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
}

// Result is how a run ended, as seen where it ran (used when the supervisor could not report).
type Result struct {
	State    job.State `json:"state"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Time     time.Time `json:"time"`
}

// Status is a backend's view of a submitted run.
type Status struct {
	// Alive is true while the supervisor (or the engine's job) still exists.
	Alive bool
	// Final is set when the run ended and its result could be read where it ran.
	Final *Result
	// Reason explains the status (an engine's pending reason, why it is gone).
	Reason string
}

// Backend starts and stops supervisors on one kind of compute target.
// Every method may be called again with the same arguments (after a restart) and must be idempotent.
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
// waits and why, in the engine's words. The controller asks every tick while such a run is Queued,
// shows the reason as the run's status reason, and expects no heartbeat while it waits.
type Pender interface {
	Pending(ctx context.Context, h Handle) (reason string, pending bool, err error)
}
