package api

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// Permanent reports whether retrying a call cannot help. It is the one definition the agent's
// and the supervisor's retry loops share:
//   - the server answered with a 4xx: it refused and will refuse again, except 408 (Request
//     Timeout), 425 (Too Early) and 429 (Too Many Requests), which ask to come back later;
//   - the caller gave up (context.Canceled).
//
// Everything else is transient: the server not answering (a network error), one attempt
// running out of time (context.DeadlineExceeded: callers bound each attempt and check their
// own context separately), a 5xx or another non-2xx answer.
func Permanent(err error) bool {
	if err == nil {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		switch e.Status {
		case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
			return false
		}
		return e.Status >= 400 && e.Status < 500
	}
	return errors.Is(err, context.Canceled)
}

// Backoff is a capped exponential backoff with jitter: the n-th wait (from 0) is drawn from
// [d/2, d] where d = min(Base×2^n, Max). The jitter keeps the clients a server restart cut off
// together (agents, supervisors) from coming back in step; the lower half keeps a floor.
// The zero value is not usable: set Base (and Max, which defaults to Base).
type Backoff struct {
	Base, Max time.Duration
	// Rand returns a number in [0, 1); nil means math/rand/v2. Tests inject a fixed source.
	Rand func() float64

	attempt int
}

// Next returns the wait before the next attempt and advances the backoff.
func (b *Backoff) Next() time.Duration {
	limit := max(b.Max, b.Base)
	d := b.Base
	for i := 0; i < b.attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	b.attempt++
	r := rand.Float64
	if b.Rand != nil {
		r = b.Rand
	}
	half := d / 2
	return half + time.Duration(r()*float64(d-half))
}

// Reset starts over from Base (after a success).
func (b *Backoff) Reset() { b.attempt = 0 }

// Wait sleeps for Next(), or until ctx ends (then it returns ctx's error).
func (b *Backoff) Wait(ctx context.Context) error {
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
