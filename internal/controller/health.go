package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// Backoff of a target whose calls fail with transient errors: the n-th consecutive failure
// (from 1) holds calls for min(healthBase×2^(n-1), healthMax). No jitter: one server probes.
const (
	healthBase = 5 * time.Second
	healthMax  = 5 * time.Minute
)

// targetHealth is what the controller knows of a target's reachability from its own backend
// calls. It is a value: record returns the next one, decided from the call's outcome and the
// time alone, so that tests drive it with any clock.
type targetHealth struct {
	// Failures counts consecutive transient failures (0: reachable as far as we know).
	Failures int
	// Since is the first failure of the streak; Until is when calls may resume (one probe);
	// Err is the last failure.
	Since, Until time.Time
	Err          string
}

// record returns the health after a call that ended with err at now. A transient error (the
// target did not answer) starts or extends the backoff; anything else (success, or an answer
// that refused the call) means the target answers. Several calls in flight when a target hangs
// fail together: only a failure after the backoff expired doubles it.
func (h targetHealth) record(err error, now time.Time) targetHealth {
	if !transient(err) {
		return targetHealth{}
	}
	if h.Failures == 0 {
		h.Since = now
	}
	h.Err = oneLine(err.Error())
	if h.Failures > 0 && now.Before(h.Until) {
		return h
	}
	h.Failures++
	h.Until = now.Add(backoffAfter(h.Failures))
	return h
}

// backoffAfter is the hold after the n-th consecutive failure.
func backoffAfter(n int) time.Duration {
	d := healthBase
	for i := 1; i < n && d < healthMax; i++ {
		d *= 2
	}
	return min(d, healthMax)
}

// Down reports whether the target is known not to answer.
func (h targetHealth) Down() bool { return h.Failures > 0 }

// allow reports whether a new call to the target may start now, with inflight calls running:
// any while it is up; none while it is backed off; then one at a time (a probe) until a call
// succeeds, so that a hung target costs one timeout per backoff, not one per run.
func (h targetHealth) allow(now time.Time, inflight int) bool {
	if !h.Down() {
		return true
	}
	return !now.Before(h.Until) && inflight == 0
}

// reason is what a run waiting on the target, and `compute show`, say about it ("" when up).
func (h targetHealth) reason(t compute.Target) string {
	if !h.Down() {
		return ""
	}
	return fmt.Sprintf("%s %s unreachable since %s: %s", targetNoun(t.Type), t.Name, h.Since.UTC().Format("15:04 UTC"), h.Err)
}

// expired reports whether a run queued at queuedAt has waited on the down target for limit: the
// wait counts from the later of the two, so that a run queued on a target down for long still
// gets the whole limit.
func (h targetHealth) expired(queuedAt, now time.Time, limit time.Duration) bool {
	if !h.Down() {
		return false
	}
	from := h.Since
	if queuedAt.After(from) {
		from = queuedAt
	}
	return now.Sub(from) >= limit
}

// targetNoun names a target by what it is for the user.
func targetNoun(typ string) string {
	switch typ {
	case compute.TypeSSH:
		return "host"
	case compute.TypeSlurm, compute.TypeCluster:
		return "cluster"
	}
	return "compute"
}

// oneLine folds an error message onto one line (a status reason is one line).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// transientErrnos are the socket errors of a target that does not answer now but may later.
var transientErrnos = []syscall.Errno{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EHOSTUNREACH,
	syscall.ENETUNREACH, syscall.ENETDOWN, syscall.ETIMEDOUT, syscall.EPIPE,
}

// transient reports whether a backend call's error says that the target did not answer (so
// retrying later may succeed) rather than that it refused: the call ran out of time, a socket
// error of transientErrnos, a connection closed mid-call, or an error that says it is a timeout
// or temporary (net.Error; the remote package's connect errors). Every error in the tree counts
// (errors.Join, wrapping). A context.Canceled (the server stopping) is not a target's fault.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	found := false
	walkErr(err, func(e error) bool {
		var errno syscall.Errno
		switch t := e.(type) {
		case syscall.Errno:
			errno = t
		case interface{ Timeout() bool }:
			if t.Timeout() {
				found = true
			}
		}
		if tmp, ok := e.(interface{ Temporary() bool }); ok && errno == 0 && tmp.Temporary() {
			found = true
		}
		for _, n := range transientErrnos {
			found = found || errno == n
		}
		found = found || e == context.DeadlineExceeded || e == io.ErrUnexpectedEOF || e == io.EOF
		return !found
	})
	return found
}

// walkErr visits err and everything it wraps, depth first, while visit returns true.
func walkErr(err error, visit func(error) bool) bool {
	if err == nil {
		return true
	}
	if !visit(err) {
		return false
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walkErr(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if !walkErr(e, visit) {
				return false
			}
		}
	}
	return true
}
