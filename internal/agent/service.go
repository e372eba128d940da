package agent

import (
	"context"
	"sync"
)

// service is what the services an agent keeps for a compute instance (Jupyter, the SSH server)
// share: how to stop the one running, and the report about it that the next heartbeat carries
// when it changed. mu guards these and the fields of the service that embeds it.
type service[R comparable] struct {
	mu      sync.Mutex
	report  *R
	changed bool // the report changed since the last heartbeat carried it
	cancel  context.CancelFunc
	done    chan struct{}
}

// halt stops the one running, if any, waits for it and clears its report; forget, called under
// mu, clears what it was started for.
func (v *service[R]) halt(forget func()) {
	v.mu.Lock()
	cancel, done := v.cancel, v.done
	forget()
	v.cancel, v.done = nil, nil
	v.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
	v.set(nil)
}

// set records the state to report; the next heartbeat carries it.
func (v *service[R]) set(r *R) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if r == nil && v.report == nil || r != nil && v.report != nil && *r == *v.report {
		return
	}
	v.report, v.changed = r, true
}

// taken is a copy of the report to send, and whether it changed since the last one taken;
// mu is held.
func (v *service[R]) taken() (*R, bool) {
	changed := v.changed
	v.changed = false
	if v.report == nil {
		return nil, changed
	}
	r := *v.report
	return &r, changed
}
