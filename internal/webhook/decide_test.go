package webhook

import (
	"errors"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
)

// What an attempt's outcome leads to, on an injected clock and jitter.
func TestDecide(t *testing.T) {
	p := Policy{MaxAttempts: 4, Base: time.Second, Max: 5 * time.Second}
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	half := func(d time.Duration) time.Duration { return d / 2 }
	refused := errors.New("connection refused")
	for _, tc := range []struct {
		name      string
		attempt   int
		o         Outcome
		jitter    func(time.Duration) time.Duration
		wantState string
		wantNext  time.Duration // after now, when pending
		wantErr   string
	}{
		{"200 delivers", 1, Outcome{Status: 200}, nil, store.DeliveryDelivered, 0, ""},
		{"204 delivers", 3, Outcome{Status: 204}, nil, store.DeliveryDelivered, 0, ""},
		{"503 first: after base", 1, Outcome{Status: 503}, nil, store.DeliveryPending, time.Second, "the receiver answered 503 Service Unavailable"},
		{"500 second: doubled", 2, Outcome{Status: 500}, nil, store.DeliveryPending, 2 * time.Second, "the receiver answered 500 Internal Server Error"},
		{"429 third: doubled again, plus jitter", 3, Outcome{Status: 429}, half, store.DeliveryPending, 6 * time.Second, "the receiver answered 429 Too Many Requests"},
		{"no answer: retried", 1, Outcome{Err: refused}, nil, store.DeliveryPending, time.Second, "connection refused"},
		{"408 retried", 1, Outcome{Status: 408}, nil, store.DeliveryPending, time.Second, "the receiver answered 408 Request Timeout"},
		{"the last attempt gives up", 4, Outcome{Status: 503}, nil, store.DeliveryFailed, 0, "gave up after 4 attempts: the receiver answered 503 Service Unavailable"},
		{"400 fails at once", 1, Outcome{Status: 400}, nil, store.DeliveryFailed, 0, "the receiver answered 400 Bad Request"},
		{"404 fails at once", 1, Outcome{Status: 404}, nil, store.DeliveryFailed, 0, "the receiver answered 404 Not Found"},
		{"a redirect is not followed: it fails", 1, Outcome{Status: 302}, nil, store.DeliveryFailed, 0, "the receiver answered 302 Found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := p.Decide(tc.attempt, tc.o, now, tc.jitter)
			if a.State != tc.wantState || a.Error != tc.wantErr || a.Status != tc.o.Status || !a.At.Equal(now) {
				t.Errorf("Decide = %+v; want state %s, error %q", a, tc.wantState, tc.wantErr)
			}
			if tc.wantState == store.DeliveryPending && a.NextAt.Sub(now) != tc.wantNext {
				t.Errorf("next attempt in %v, want %v", a.NextAt.Sub(now), tc.wantNext)
			}
		})
	}
}

// The backoff doubles from Base and stops at Max.
func TestBackoff(t *testing.T) {
	p := Policy{MaxAttempts: 20, Base: 2 * time.Second, Max: 10 * time.Second}
	var got []time.Duration
	for a := 1; a <= 5; a++ {
		got = append(got, p.Backoff(a))
	}
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoffs = %v, want %v", got, want)
		}
	}
}
