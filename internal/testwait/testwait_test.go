package testwait

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	For(t, "the third poll", func() bool { return n.Add(1) >= 3 })
	if got := n.Load(); got != 3 {
		t.Errorf("polled %d times, want 3", got)
	}
}

func TestUntilGivesUpAtTheDeadline(t *testing.T) {
	var n atomic.Int32
	if Until(time.Now(), func() bool { n.Add(1); return false }) {
		t.Fatal("Until = true for a condition that never holds")
	}
	if n.Load() < 1 {
		t.Error("Until did not poll before giving up")
	}
}

// A condition that never holds fails the test with what it waited for.
func TestWithinFailsNamingWhatItWaitedFor(t *testing.T) {
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() { // Fatalf ends the goroutine as it ends a test's
		defer close(done)
		Within(rec, 0, "the moon", func() bool { return false })
	}()
	<-done
	if want := "timed out after 0s waiting for the moon"; rec.msg != want {
		t.Errorf("failure %q, want %q", rec.msg, want)
	}
}

type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
