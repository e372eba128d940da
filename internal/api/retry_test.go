package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPermanent(t *testing.T) {
	answered := func(status int) error { return &Error{Status: status, Message: http.StatusText(status)} }
	refused := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/api/agents/join",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"400 bad request", answered(http.StatusBadRequest), true},
		{"401 unauthorized (expired join token)", answered(http.StatusUnauthorized), true},
		{"403 forbidden", answered(http.StatusForbidden), true},
		{"404 not found", answered(http.StatusNotFound), true},
		{"409 conflict (stale attempt)", answered(http.StatusConflict), true},
		{"410 gone (node deleted)", answered(http.StatusGone), true},
		{"408 request timeout", answered(http.StatusRequestTimeout), false},
		{"425 too early", answered(http.StatusTooEarly), false},
		{"429 too many requests", answered(http.StatusTooManyRequests), false},
		{"500 internal", answered(http.StatusInternalServerError), false},
		{"502 bad gateway", answered(http.StatusBadGateway), false},
		{"503 unavailable", answered(http.StatusServiceUnavailable), false},
		{"304 not modified", answered(http.StatusNotModified), false},
		{"wrapped 401", fmt.Errorf("join http://x: %w", answered(http.StatusUnauthorized)), true},
		{"wrapped 429", fmt.Errorf("heartbeat: %w", answered(http.StatusTooManyRequests)), false},
		{"connection refused", refused, false},
		{"connection reset", &url.Error{Op: "Get", URL: "http://x", Err: syscall.ECONNRESET}, false},
		{"DNS failure", &net.DNSError{Err: "no such host", Name: "server.invalid", IsNotFound: true}, false},
		{"truncated answer", errors.New("decode POST /api/runs/r1/status answer: unexpected EOF"), false},
		{"one attempt timed out", &url.Error{Op: "Post", URL: "http://x", Err: context.DeadlineExceeded}, false},
		{"bare deadline", context.DeadlineExceeded, false},
		{"caller canceled", &url.Error{Op: "Post", URL: "http://x", Err: context.Canceled}, true},
		{"bare canceled", context.Canceled, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Permanent(tt.err); got != tt.want {
				t.Errorf("Permanent(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// fixed returns a random source that yields vs in turn.
func fixed(vs ...float64) func() float64 {
	i := 0
	return func() float64 {
		v := vs[i%len(vs)]
		i++
		return v
	}
}

func TestBackoffDoublesWithinJitterAndCap(t *testing.T) {
	tests := []struct {
		name string
		b    Backoff
		n    int
		want []time.Duration
	}{
		{"lowest draw is half", Backoff{Base: time.Second, Max: 30 * time.Second, Rand: fixed(0)}, 7,
			[]time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 15 * time.Second}},
		{"highest draw approaches the full step", Backoff{Base: time.Second, Max: 30 * time.Second, Rand: fixed(0.999)}, 6,
			[]time.Duration{999500 * time.Microsecond, 1999 * time.Millisecond, 3998 * time.Millisecond, 7996 * time.Millisecond,
				15992 * time.Millisecond, 29985 * time.Millisecond}},
		{"middle draws", Backoff{Base: 100 * time.Millisecond, Max: time.Second, Rand: fixed(0.5, 0.25)}, 6,
			[]time.Duration{75 * time.Millisecond, 125 * time.Millisecond, 300 * time.Millisecond, 500 * time.Millisecond,
				750 * time.Millisecond, 625 * time.Millisecond}},
		{"max below base means base", Backoff{Base: time.Second, Max: 0, Rand: fixed(1)}, 3,
			[]time.Duration{time.Second, time.Second, time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []time.Duration
			for range tt.n {
				got = append(got, tt.b.Next())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackoffResetAndBounds(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: 5 * time.Second}
	for i := range 200 { // the real source: always within [d/2, d], never above Max
		d := b.Next()
		step := min(100*time.Millisecond<<min(i, 10), 5*time.Second)
		if d < step/2 || d > step {
			t.Fatalf("wait %d = %s, want within [%s, %s]", i, d, step/2, step)
		}
	}
	b.Rand = fixed(0)
	b.Reset()
	if d := b.Next(); d != 50*time.Millisecond {
		t.Errorf("after Reset: %s, want 50ms", d)
	}
}

func TestBackoffWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b := Backoff{Base: time.Hour, Max: time.Hour}
	if err := b.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a canceled context = %v", err)
	}
	quick := Backoff{Base: time.Millisecond, Max: time.Millisecond}
	if err := quick.Wait(t.Context()); err != nil {
		t.Errorf("Wait = %v", err)
	}
}
