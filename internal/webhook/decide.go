package webhook

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
)

// Policy is how often and how long a delivery is tried.
type Policy struct {
	// MaxAttempts: a delivery that failed this many times is given up.
	MaxAttempts int
	// Base is the wait after the first failure; each next wait doubles, up to Max.
	Base, Max time.Duration
}

// DefaultPolicy tries a delivery 10 times over about a quarter of an hour (2 s, 4 s, ...
// 512 s, plus jitter), where MLflow's server tries 4 times in 7 s and forgets the event.
var DefaultPolicy = Policy{MaxAttempts: 10, Base: 2 * time.Second, Max: 10 * time.Minute}

// Outcome is what one attempt got: the receiver's HTTP status (0: none), or the error that
// kept it from answering.
type Outcome struct {
	Status int
	Err    error
}

// Retryable is whether an outcome is worth another try: no answer (refused, timed out, cut
// off), or an answer that says "later" (408, 425, 429, 5xx). Any other answer is final: a 2xx
// delivers, a redirect (never followed) or another 4xx fails at once, as MLflow retries only
// 429, 500, 502, 503 and 504.
func (o Outcome) Retryable() bool {
	if o.Err != nil {
		return true
	}
	switch {
	case o.Status == http.StatusRequestTimeout, o.Status == http.StatusTooEarly, o.Status == http.StatusTooManyRequests:
		return true
	case o.Status >= 500:
		return true
	}
	return false
}

// Delivered is whether the receiver took it: a 2xx.
func (o Outcome) Delivered() bool { return o.Err == nil && o.Status >= 200 && o.Status < 300 }

// Decide is what becomes of a delivery after its attempt number attempt (1 the first) got o at
// now: delivered, tried again after the backoff plus jitter(backoff), or failed for good once
// it is not retryable or MaxAttempts is reached. jitter returns an extra wait in [0, d); a test
// injects its own.
func (p Policy) Decide(attempt int, o Outcome, now time.Time, jitter func(d time.Duration) time.Duration) store.Attempt {
	a := store.Attempt{Status: o.Status, At: now}
	switch {
	case o.Err != nil:
		a.Error = o.Err.Error()
	case !o.Delivered():
		a.Error = fmt.Sprintf("the receiver answered %d %s", o.Status, http.StatusText(o.Status))
	}
	switch {
	case o.Delivered():
		a.State = store.DeliveryDelivered
	case !o.Retryable():
		a.State = store.DeliveryFailed
	case attempt >= p.MaxAttempts:
		a.State = store.DeliveryFailed
		a.Error = fmt.Sprintf("gave up after %d attempts: %s", attempt, a.Error)
	default:
		d := p.Backoff(attempt)
		if jitter != nil {
			d += jitter(d)
		}
		a.State, a.NextAt = store.DeliveryPending, now.Add(d)
	}
	return a
}

// Backoff is the wait after failed attempt number attempt: Base doubled attempt-1 times, at
// most Max.
func (p Policy) Backoff(attempt int) time.Duration {
	d := p.Base
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max)
}
