package backend

import (
	"context"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// Placer is an optional capability of backends that choose the nodes of their targets' runs
// themselves (a managed cluster's scheduler and autoscaler). The controller calls Place once per
// pass with the active runs of the backend's targets and applies the plan: it records each
// placement with its run (job.Placement, generic run data) and hands the run to Submit with it
// in Launch.Placement; it shows why the others wait, fails the impossible ones, and requeues
// those whose node went away, all through the run state machine. Until a Placer places a run,
// the controller does not submit it. Place may act on the backend's own resources meanwhile
// (create, release and delete nodes); it must be safe to call again after a crash, so a run
// placed earlier and not yet handed a handle is placed again (with the same placement).
type Placer interface {
	Place(ctx context.Context, in PlaceInput) (Plan, error)
}

// PlaceInput is what a Placer decides from, besides its own state.
type PlaceInput struct {
	Now time.Time
	// Runs are the active runs of the backend's targets (queued, placed, running), oldest first,
	// each with its Placement when it has one.
	Runs []*job.Run
}

// Plan is what a Placer decided for the runs it was given. Every list is in the order the
// controller should apply it; a run appears in one list at most.
type Plan struct {
	// Placed are runs to submit now, with their nodes.
	Placed []Placed
	// Waiting are queued runs left waiting, with the reason shown on each.
	Waiting []RunNote
	// Fail are runs that can never run as asked; Requeue are placed runs whose nodes went away
	// (preempted, deleted): they go back to the queue as a new attempt (job.Requeued).
	Fail    []RunNote
	Requeue []RunNote
	// Wake is when the controller calls Place again at the latest if nothing changes meanwhile
	// for the backend's targets (a run of theirs created, ended, canceled; a Kick: sooner). Zero
	// means at the next tick, for a Placer with timers it does not report (idle nodes to
	// release, joins to time out); a Placer that sets it is not called while nothing happens.
	Wake time.Time
}

// Placed is one run's placement.
type Placed struct {
	Run       string
	Placement job.Placement
}

// RunNote names a run and says why something is done to it.
type RunNote struct {
	Run    string
	Reason string
}

// SpecChecker is an optional capability: a backend that refuses, when a job is created, what
// its target can never run (more nodes or bigger nodes than it has). The error names the spec's
// field.
type SpecChecker interface {
	CheckSpec(ctx context.Context, t compute.Target, sp job.Spec) error
}
