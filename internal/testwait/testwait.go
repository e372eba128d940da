package testwait

import (
	"testing"
	"time"
)

// DefaultTimeout is how long For waits: far longer than anything a unit test waits for takes.
const DefaultTimeout = 10 * time.Second

// For polls cond until it holds, failing t after DefaultTimeout with what it waited for.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, DefaultTimeout, what, cond)
}

// Within polls cond until it holds, failing t after timeout with what it waited for. It polls
// at once, then at intervals that grow from a millisecond to a 200th of the timeout (between
// 2ms and 100ms: the e2e tests' waits of 20s and more poll every 100ms, as they did), so a short
// wait ends soon after cond holds and a long one does not spin on an expensive cond.
func Within(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(time.Now().Add(timeout), cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Until polls cond until it holds (true) or the deadline passes (false), for a test that
// decides itself what a timeout means.
func Until(deadline time.Time, cond func() bool) bool {
	most := min(max(time.Until(deadline)/200, 2*time.Millisecond), 100*time.Millisecond)
	for wait := time.Millisecond; ; wait = min(2*wait, most) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
}
