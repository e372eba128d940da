package job

import "fmt"

// State is a run's status, named as Azure ML names them.
//
//	NotStarted ─► Queued ─► (Provisioning) ─► Preparing ─► Starting ─► Running ─► Finalizing ─► Completed
//	     │           │            │               │            │           │           │       ─► Failed
//	     └───────────┴────────────┴───────────────┴────────────┴───────────┴───────────┴──► CancelRequested ─► Canceled
//	any active state ─► NotResponding ─► (back to the state reported next, or Failed)
//	Queued … Finalizing, NotResponding ─(Requeued)─► Queued as a new attempt; CancelRequested ─(Requeued)─► Canceled
//
// Failed and Canceled can be reached from every non-terminal state. Requeued is the one edge
// back: a run that lost its node goes to the queue again (see Requeued).
type State string

// The run states.
const (
	NotStarted      State = "NotStarted"
	Queued          State = "Queued"
	Provisioning    State = "Provisioning"
	Preparing       State = "Preparing"
	Starting        State = "Starting"
	Running         State = "Running"
	Finalizing      State = "Finalizing"
	CancelRequested State = "CancelRequested"
	NotResponding   State = "NotResponding"
	Completed       State = "Completed"
	Failed          State = "Failed"
	Canceled        State = "Canceled"
)

// Requeued is not a state a run is ever in: it names the requeue edge, taken by the controller
// when a run loses its node through no fault of its own (the node was preempted, or deleted by
// hand). Next(from, Requeued) is Queued, where the run starts a new attempt, from every state a
// run handed to a backend can be in; a run whose cancel was requested is Canceled instead, as
// nothing is left to stop. Requeued is not Valid, so a supervisor cannot report it.
const Requeued State = "Requeued"

// Terminal reports whether no further transition is possible.
func (s State) Terminal() bool {
	return s == Completed || s == Failed || s == Canceled
}

// order ranks the forward phases; a run only moves forward through them.
var order = map[State]int{
	NotStarted: 0, Queued: 1, Provisioning: 2, Preparing: 3, Starting: 4, Running: 5, Finalizing: 6,
}

// States lists every state a run can be in, in the order of a run's life.
var States = []State{NotStarted, Queued, Provisioning, Preparing, Starting, Running, Finalizing,
	CancelRequested, NotResponding, Completed, Failed, Canceled}

// Valid reports whether s is a known state.
func (s State) Valid() bool {
	_, ok := order[s]
	return ok || s == CancelRequested || s == NotResponding || s.Terminal()
}

// TransitionError says why a transition was refused.
type TransitionError struct {
	From, To State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("invalid transition %s -> %s", e.From, e.To)
}

// Next checks the transition from → to and returns the state the run should be in.
// Forward phase moves may skip phases (a fast run can go Queued → Running); a run never
// goes back, except out of NotResponding. Once cancel was requested, phase reports
// are absorbed (the run stays CancelRequested) until a terminal state arrives.
// A repeated report of the current state is not an error (reports are retried).
// To = Requeued is the requeue edge (see Requeued).
func Next(from, to State) (State, error) {
	if to == Requeued && from.Valid() {
		return requeue(from)
	}
	if !to.Valid() || !from.Valid() {
		return from, &TransitionError{from, to}
	}
	if from == to {
		return from, nil
	}
	if from.Terminal() {
		return from, &TransitionError{from, to}
	}
	if to.Terminal() {
		return to, nil
	}
	switch from {
	case CancelRequested:
		if _, phase := order[to]; phase || to == NotResponding {
			return CancelRequested, nil
		}
		return from, &TransitionError{from, to}
	case NotResponding:
		if to == CancelRequested {
			return to, nil
		}
		if _, phase := order[to]; phase && to != NotStarted {
			return to, nil
		}
		return from, &TransitionError{from, to}
	}
	switch to {
	case CancelRequested:
		return to, nil
	case NotResponding:
		if order[from] >= order[Provisioning] {
			return to, nil
		}
		return from, &TransitionError{from, to}
	}
	if order[to] > order[from] {
		return to, nil
	}
	if order[to] < order[from] {
		// A late report of an earlier phase (retries, reordering) changes nothing.
		return from, nil
	}
	return from, &TransitionError{from, to}
}

// requeue is the requeue edge out of from: Queued (a new attempt), Canceled for a run whose
// cancel was requested, and refused before the run was queued or after it ended.
func requeue(from State) (State, error) {
	switch {
	case from.Terminal() || from == NotStarted:
		return from, &TransitionError{from, Requeued}
	case from == CancelRequested:
		return Canceled, nil
	}
	return Queued, nil
}
