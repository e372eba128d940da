package tracking

import (
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// Update is what MLflow's runs/update may change (nil: unchanged).
type Update struct {
	Status  *job.State
	EndTime *int64 // milliseconds
	RunName *string
}

// Apply applies u to run r and returns the events to record. A job's state and end have one
// writer, the controller: for a job only the name changes. A run that is not a job takes
// whatever status its client sets: MLflow lets a client resume a finished run (FINISHED →
// RUNNING), which a job's state machine forbids, and nothing but its client drives it.
func (u Update) Apply(r *job.Run, isJob bool, now time.Time) []job.Event {
	if u.RunName != nil {
		r.DisplayName = *u.RunName
	}
	if isJob {
		return nil
	}
	var events []job.Event
	if u.Status != nil && *u.Status != r.Status {
		events = append(events, job.Event{Time: now, From: r.Status, To: *u.Status, Reason: "MLflow runs/update"})
		r.Status = *u.Status
	}
	if u.EndTime != nil {
		t := time.UnixMilli(*u.EndTime).UTC()
		r.EndedAt = &t
	}
	return events
}
