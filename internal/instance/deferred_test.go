package instance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// step is one check of an instance in a deferral scenario: the time, its state, its jobs, and
// what Decide should do and say.
type step struct {
	at         time.Time
	state      State
	jobs       []string
	wantAction Action
	wantReason string
	wantDefer  bool
}

// A scheduled stop that fires while a job runs waits for the job, then stops the instance; one
// whose job outlives the next scheduled start is dropped; one whose instance was stopped by
// other means is forgotten. Each scenario checks the instance every few minutes with an
// injected clock, feeding each decision's CheckedTo and Deferred into the next check, as the
// controller does through the store.
func TestDecideDeferredStop(t *testing.T) {
	stop18 := sched(t, Stop, "0 18 * * *", "Europe/Berlin") // 17:00 UTC in winter
	start8 := sched(t, Start, "0 8 * * *", "Europe/Berlin") // 07:00 UTC
	day := func(d, h, m int) time.Time { return time.Date(2025, 3, d, h, m, 0, 0, time.UTC) }
	fired := `schedule "stop at 0 18 * * * (Europe/Berlin)" fired at 2025-03-03 18:00 CET`
	job := []string{"train_1"}
	tests := []struct {
		name  string
		steps []step
	}{{
		name: "deferred until the job ends",
		steps: []step{
			{day(3, 16, 55), Running, job, None, "", false},
			{day(3, 17, 0), Running, job, None, fired + ": stop deferred: job train_1 running", true},
			{day(3, 17, 45), Running, job, None, fired + ": stop deferred: job train_1 running", true},
			{day(3, 19, 10), Running, nil, Stop, fired + ": stop deferred until its jobs ended", false},
		},
	}, {
		name: "the next scheduled start comes first",
		steps: []step{
			{day(3, 16, 55), Running, job, None, "", false},
			{day(3, 17, 0), Running, job, None, fired + ": stop deferred: job train_1 running", true},
			{day(4, 6, 55), Running, job, None, fired + ": stop deferred: job train_1 running", true},
			{day(4, 7, 0), Running, job, None, "the stop deferred since 2025-03-03 18:00 CET was dropped: " +
				`schedule "start at 0 8 * * * (Europe/Berlin)" fired at 2025-03-04 08:00 CET first`, false},
			{day(4, 7, 30), Running, nil, None, "", false},
		},
	}, {
		name: "stopped meanwhile: nothing left to defer",
		steps: []step{
			{day(3, 16, 55), Running, job, None, "", false},
			{day(3, 17, 0), Running, job, None, fired + ": stop deferred: job train_1 running", true},
			{day(3, 17, 20), Stopped, nil, None, "", false},
			{day(3, 17, 40), Starting, nil, None, "", false},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var checked time.Time
			var deferred Deferred
			for _, s := range tt.steps {
				sig := Signals{Jobs: s.jobs, ReportedAt: s.at, CPUPercent: 50}
				d := Decide(Input{Now: s.at, State: s.state, ActiveAt: s.at, CheckedTo: checked, Signals: sig,
					Schedules: []Schedule{stop18, start8}, Deferred: deferred})
				got := []any{d.Action, d.Reason, !d.Deferred.IsZero()}
				if diff := cmp.Diff([]any{s.wantAction, s.wantReason, s.wantDefer}, got); diff != "" {
					t.Errorf("at %s (-want +got):\n%s", s.at.Format(time.DateTime), diff)
				}
				checked, deferred = d.CheckedTo, d.Deferred
			}
		})
	}
}
