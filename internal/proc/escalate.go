package proc

import (
	"context"
	"syscall"
	"time"
)

// Target is one thing Escalate stops: how to signal it, and a channel closed once it has ended.
type Target struct {
	Signal func(syscall.Signal)
	Done   <-chan struct{}
}

// Escalate is the one TERM → grace → KILL: SIGTERM to every target that has not ended, then,
// when the grace period is over, SIGKILL to every target still running. It returns once every
// target has ended or been sent SIGKILL (it does not wait for a killed target to go), or when
// ctx ends. A target that has ended is never signalled again: its pid may belong to another
// process by now.
func Escalate(ctx context.Context, grace time.Duration, targets ...Target) {
	for _, t := range targets {
		if !ended(t) {
			t.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	over := false
	for _, t := range targets {
		if !over {
			select {
			case <-t.Done:
				continue
			case <-ctx.Done():
				return
			case <-deadline.C:
				over = true
			}
		}
		if !ended(t) {
			t.Signal(syscall.SIGKILL)
		}
	}
}

func ended(t Target) bool {
	select {
	case <-t.Done:
		return true
	default:
		return false
	}
}
