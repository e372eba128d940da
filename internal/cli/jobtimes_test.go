package cli

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// job show's and job stream's duration counts from the job's creation, not from the moment its
// command started: a job that waited 10 s and ran 379 ms took 10.4 s, and says where it went.
func TestRunTimes(t *testing.T) {
	created := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := created.Add(d); return &t }
	tests := []struct {
		name           string
		started, ended *time.Time
		now            time.Time
		want           string
	}{
		{"waited then ran", at(10 * time.Second), at(10*time.Second + 379*time.Millisecond), created.Add(time.Hour),
			"10.4s (waited 10.0s to start, ran 379ms)"},
		{"running", at(2 * time.Second), nil, created.Add(5 * time.Second),
			"5.0s so far (waited 2.0s to start, running 3.0s)"},
		{"queued", nil, nil, created.Add(4 * time.Second), "4.0s so far (not started yet)"},
		{"canceled while queued", nil, at(3 * time.Second), created.Add(time.Hour), "3.0s (never started)"},
		{"long", at(90 * time.Second), at(20 * time.Minute), created.Add(time.Hour),
			"20m0s (waited 1m30s to start, ran 18m30s)"},
		{"clock skew never shows negative", at(-time.Second), at(time.Second), created.Add(time.Hour),
			"1.0s (waited 0ms to start, ran 2.0s)"},
	}
	for _, tt := range tests {
		r := &job.Run{CreatedAt: created, StartedAt: tt.started, EndedAt: tt.ended}
		if got := timesOf(r, tt.now).String(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
