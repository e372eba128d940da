package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// timeoutErr is an error that says it is a timeout, as the remote package's connect errors
// and net.Error do.
type timeoutErr struct{ msg string }

func (e timeoutErr) Error() string { return e.msg }
func (e timeoutErr) Timeout() bool { return true }

// temporaryErr says it may heal by itself (remote.ErrUnreachable, ErrDisconnected).
type temporaryErr struct{}

func (temporaryErr) Error() string   { return "host unreachable" }
func (temporaryErr) Temporary() bool { return true }

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"handshake timed out", fmt.Errorf("connect to vm: %w", timeoutErr{"ssh vm: SSH handshake timed out after 15s"}), true},
		{"temporary", fmt.Errorf("connect to vm: %w", temporaryErr{}), true},
		{"call deadline", fmt.Errorf("submit: %w", context.DeadlineExceeded), true},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"no route", fmt.Errorf("x: %w", syscall.EHOSTUNREACH), true},
		{"i/o timeout", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, true},
		{"connection closed mid-call", fmt.Errorf("read handle: %w", io.ErrUnexpectedEOF), true},
		{"joined with a refusal", errors.Join(errors.New("bad"), syscall.ECONNRESET), true},
		{"server stopping", fmt.Errorf("submit: %w", context.Canceled), false},
		{"refused authentication", errors.New("ssh vm: authentication failed: the host refused the key"), false},
		{"bad spec", errors.New("image: not found"), false},
		{"permission denied", fmt.Errorf("mkdir: %w", syscall.EACCES), false},
		{"a timeout saying it is not", &net.DNSError{Err: "no such host", Name: "vm", IsNotFound: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := transient(tt.err); got != tt.want {
				t.Errorf("transient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestTargetHealth(t *testing.T) {
	t0 := time.Date(2025, 3, 4, 20, 33, 10, 0, time.UTC)
	hung := timeoutErr{"ssh vm: SSH handshake timed out after 15s"}
	vm := compute.Target{Name: "vm", Type: compute.TypeSSH}

	var h targetHealth
	if h.Down() || !h.allow(t0, 100) || h.reason(vm) != "" {
		t.Fatalf("a target never called is up: %+v", h)
	}
	h = h.record(hung, t0)
	if want := "host vm unreachable since 20:33 UTC: ssh vm: SSH handshake timed out after 15s"; h.reason(vm) != want {
		t.Errorf("reason = %q, want %q", h.reason(vm), want)
	}
	if h.allow(t0.Add(healthBase-time.Second), 0) {
		t.Errorf("a call allowed during the backoff")
	}
	if !h.allow(t0.Add(healthBase), 0) || h.allow(t0.Add(healthBase), 1) {
		t.Errorf("after the backoff: exactly one probe at a time")
	}
	// Calls in flight when it hung fail together: one failure for the backoff.
	if again := h.record(hung, t0.Add(time.Second)); again.Failures != 1 || !again.Until.Equal(h.Until) {
		t.Errorf("a failure during the backoff extended it: %+v", again)
	}
	// Each probe that fails doubles the backoff, up to healthMax; Since stays the first failure.
	now := t0
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		now = h.Until
		h = h.record(hung, now)
		if got := h.Until.Sub(now); got != want || !h.Since.Equal(t0) {
			t.Errorf("failure %d: backoff %s since %s, want %s since %s", i+2, got, h.Since, want, t0)
		}
	}
	for i := 0; i < 20; i++ {
		now = h.Until
		h = h.record(hung, now)
	}
	if got := h.Until.Sub(now); got != healthMax {
		t.Errorf("backoff after many failures = %s, want the cap %s", got, healthMax)
	}
	// An answer, even a refusal, means it is reachable again.
	if up := h.record(errors.New("authentication failed"), now); up.Down() {
		t.Errorf("a refusal kept the target down: %+v", up)
	}
	if up := h.record(nil, now); up.Down() || !up.allow(now, 50) {
		t.Errorf("a success kept the target down: %+v", up)
	}
}

func TestTargetHealthExpired(t *testing.T) {
	t0 := time.Date(2025, 3, 4, 20, 0, 0, 0, time.UTC)
	h := targetHealth{}.record(syscall.ECONNREFUSED, t0)
	limit := 15 * time.Minute
	tests := []struct {
		name     string
		queuedAt time.Time
		now      time.Time
		want     bool
	}{
		{"queued before it went down: counts from the failure", t0.Add(-time.Hour), t0.Add(limit - time.Second), false},
		{"limit reached", t0.Add(-time.Hour), t0.Add(limit), true},
		{"queued while down: counts from the run", t0.Add(10 * time.Minute), t0.Add(limit + time.Minute), false},
		{"queued while down, limit reached", t0.Add(10 * time.Minute), t0.Add(10*time.Minute + limit), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := h.expired(tt.queuedAt, tt.now, limit); got != tt.want {
				t.Errorf("expired = %v, want %v", got, tt.want)
			}
		})
	}
	if (targetHealth{}).expired(t0, t0.Add(time.Hour), limit) {
		t.Errorf("a run waiting on a target that is up expired")
	}
}
