package job

import (
	"errors"
	"testing"
)

func TestNext(t *testing.T) {
	tests := []struct {
		from, to State
		want     State
		wantErr  bool
	}{
		{NotStarted, Queued, Queued, false},
		{Queued, Preparing, Preparing, false},
		{Queued, Running, Running, false},
		{Preparing, Starting, Starting, false},
		{Running, Finalizing, Finalizing, false},
		{Finalizing, Completed, Completed, false},
		{Running, Failed, Failed, false},
		{Queued, Canceled, Canceled, false},
		{Running, Running, Running, false},
		{Running, Preparing, Running, false},
		{Running, CancelRequested, CancelRequested, false},
		{CancelRequested, Finalizing, CancelRequested, false},
		{CancelRequested, Canceled, Canceled, false},
		{CancelRequested, Completed, Completed, false},
		{Running, NotResponding, NotResponding, false},
		{NotResponding, Running, Running, false},
		{NotResponding, Finalizing, Finalizing, false},
		{NotResponding, Failed, Failed, false},
		{Queued, NotResponding, Queued, true},
		{Completed, Running, Completed, true},
		{Completed, Failed, Completed, true},
		{Canceled, Canceled, Canceled, false},
		{Running, State("Bogus"), Running, true},
		// The requeue edge: back to the queue (a new attempt) from wherever a placed run can be.
		{Queued, Requeued, Queued, false},
		{Preparing, Requeued, Queued, false},
		{Running, Requeued, Queued, false},
		{Finalizing, Requeued, Queued, false},
		{NotResponding, Requeued, Queued, false},
		{CancelRequested, Requeued, Canceled, false},
		{NotStarted, Requeued, NotStarted, true},
		{Completed, Requeued, Completed, true},
		{Canceled, Requeued, Canceled, true},
		{Running, Queued, Running, false}, // a late report of Queued is absorbed, not a requeue
	}
	for _, tt := range tests {
		t.Run(string(tt.from)+"->"+string(tt.to), func(t *testing.T) {
			got, err := Next(tt.from, tt.to)
			if got != tt.want {
				t.Errorf("Next(%s, %s) = %s, want %s", tt.from, tt.to, got, tt.want)
			}
			var te *TransitionError
			if (err != nil) != tt.wantErr || (err != nil && !errors.As(err, &te)) {
				t.Errorf("Next(%s, %s) error = %v, wantErr %v", tt.from, tt.to, err, tt.wantErr)
			}
		})
	}
}

// Requeued names an edge, not a state: nobody can report it.
func TestRequeuedIsNotReportable(t *testing.T) {
	if Requeued.Valid() {
		t.Error("Requeued.Valid() = true: a supervisor could requeue its own run")
	}
}

func TestTerminal(t *testing.T) {
	for _, s := range []State{Completed, Failed, Canceled} {
		if !s.Terminal() {
			t.Errorf("%s.Terminal() = false", s)
		}
	}
	for _, s := range []State{NotStarted, Queued, Running, CancelRequested, NotResponding} {
		if s.Terminal() {
			t.Errorf("%s.Terminal() = true", s)
		}
	}
}

// States is the list /metrics exports a series for: every state, each once.
func TestStatesListsEveryState(t *testing.T) {
	seen := map[State]bool{}
	for _, s := range States {
		if !s.Valid() || seen[s] {
			t.Errorf("%s: valid %v, listed twice %v", s, s.Valid(), seen[s])
		}
		seen[s] = true
	}
	for s := range order {
		if !seen[s] {
			t.Errorf("%s missing from States", s)
		}
	}
	for _, s := range []State{CancelRequested, NotResponding, Completed, Failed, Canceled} {
		if !seen[s] {
			t.Errorf("%s missing from States", s)
		}
	}
}
