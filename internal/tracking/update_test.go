package tracking

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

func TestUpdateApply(t *testing.T) {
	now := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	running, finished, name, end := job.Running, job.Completed, "renamed", int64(1795492435598)
	tests := []struct {
		name       string
		from       job.State
		isJob      bool
		u          Update
		wantState  job.State
		wantEvents int
		wantEnd    bool
	}{
		{"a job is only renamed", job.Running, true, Update{Status: &finished, EndTime: &end, RunName: &name}, job.Running, 0, false},
		{"a notebook run ends", job.Running, false, Update{Status: &finished, EndTime: &end}, job.Completed, 1, true},
		{"a finished notebook run resumes", job.Completed, false, Update{Status: &running}, job.Running, 1, false},
		{"the same status records nothing", job.Running, false, Update{Status: &running}, job.Running, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &job.Run{Status: tt.from, DisplayName: "before"}
			ev := tt.u.Apply(r, tt.isJob, now)
			if r.Status != tt.wantState || len(ev) != tt.wantEvents || (r.EndedAt != nil) != tt.wantEnd {
				t.Errorf("status %s, %d events, ended %v", r.Status, len(ev), r.EndedAt)
			}
			if tt.u.RunName != nil && r.DisplayName != name {
				t.Errorf("name %q", r.DisplayName)
			}
			if tt.wantEnd && !r.EndedAt.Equal(time.UnixMilli(end)) {
				t.Errorf("ended %v", r.EndedAt)
			}
		})
	}
}
