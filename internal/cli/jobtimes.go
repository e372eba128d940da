package cli

import (
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// runTimes is how long a run took as a user counts it: from its creation (job create) to its
// end, or to now while it is not over, split into the wait before its command started (queued,
// nodes provisioned, the environment built) and the time it ran.
type runTimes struct {
	Total  time.Duration
	Waited time.Duration // creation to start; to the end or now when it never started
	Ran    time.Duration // start to end, or to now
	// Started and Ended say whether the run started running and whether it is over.
	Started, Ended bool
}

// timesOf reads a run's times at now (time as data: the caller passes the clock).
func timesOf(r *job.Run, now time.Time) runTimes {
	end := now
	t := runTimes{Ended: r.EndedAt != nil}
	if t.Ended {
		end = *r.EndedAt
	}
	created := r.CreatedAt
	if created.IsZero() && r.StartedAt != nil {
		created = *r.StartedAt // a view without its creation time: the run alone
	}
	t.Total = nonNegative(end.Sub(created))
	t.Waited = t.Total
	if r.StartedAt != nil {
		t.Started = true
		t.Waited = nonNegative(r.StartedAt.Sub(created))
		t.Ran = nonNegative(end.Sub(*r.StartedAt))
	}
	return t
}

func nonNegative(d time.Duration) time.Duration { return max(d, 0) }

// String is job show's duration: "10.4s (waited 10.0s to start, ran 379ms)", "5.0s so far
// (waited 2.0s to start, running 3.0s)", "3.0s (never started)".
func (t runTimes) String() string {
	total := fmtDuration(t.Total)
	if !t.Ended {
		total += " so far"
	}
	switch {
	case !t.Started && t.Ended:
		return total + " (never started)"
	case !t.Started:
		return total + " (not started yet)"
	case t.Ended:
		return fmt.Sprintf("%s (waited %s to start, ran %s)", total, fmtDuration(t.Waited), fmtDuration(t.Ran))
	}
	return fmt.Sprintf("%s (waited %s to start, running %s)", total, fmtDuration(t.Waited), fmtDuration(t.Ran))
}

// runDuration is job list's DURATION: the wall time from creation to the end (or now).
func runDuration(r *job.Run) string {
	return fmtDuration(timesOf(r, time.Now()).Total)
}
