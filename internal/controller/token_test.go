package controller

import (
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/tokens"
)

func TestAdmit(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	live := tokens.RunClaims{RunID: "r", Attempt: 1, Expires: now.Add(time.Hour)}
	expired := tokens.RunClaims{RunID: "r", Attempt: 1, Expires: now.Add(-time.Second)}
	legacy := tokens.RunClaims{RunID: "r"}
	const grace = 2 * time.Minute
	tests := []struct {
		name     string
		claims   tokens.RunClaims
		run      job.Run
		wantKind Kind // 0: admitted
		wantMsg  string
	}{
		{"running", live, job.Run{ID: "r", Status: job.Running, Attempt: 1}, 0, ""},
		{"queued", live, job.Run{ID: "r", Status: job.Queued}, 0, ""},
		{"finalizing", live, job.Run{ID: "r", Status: job.Finalizing, Attempt: 1}, 0, ""},
		{"ended within the grace", live, job.Run{ID: "r", Status: job.Completed, Attempt: 1, EndedAt: ago(grace)}, 0, ""},
		{"ended before the grace", live, job.Run{ID: "r", Status: job.Completed, Attempt: 1, EndedAt: ago(grace + time.Second)},
			Unauthorized, "run r ended at 2026-05-01T11:57:59Z; its token is no longer valid"},
		{"failed long ago", live, job.Run{ID: "r", Status: job.Failed, Attempt: 1, EndedAt: ago(30 * 24 * time.Hour)},
			Unauthorized, "run r ended at 2026-04-01T12:00:00Z; its token is no longer valid"},
		{"ended, no end time", live, job.Run{ID: "r", Status: job.Canceled, Attempt: 1}, Unauthorized, "run r has ended; its token is no longer valid"},
		{"another attempt", live, job.Run{ID: "r", Status: job.Running, Attempt: 2}, Conflict, "run r is on attempt 2; this token is for attempt 1"},
		{"expired while running", expired, job.Run{ID: "r", Status: job.Running, Attempt: 1}, Unauthorized, "this token of run r expired at 2026-05-01T11:59:59Z"},
		{"expired, still queued", expired, job.Run{ID: "r", Status: job.Queued, Attempt: 1}, 0, ""},
		{"first format, running", legacy, job.Run{ID: "r", Status: job.Running, Attempt: 3}, 0, ""},
		{"first format, ended before the grace", legacy, job.Run{ID: "r", Status: job.Completed, EndedAt: ago(time.Hour)},
			Unauthorized, "run r ended at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Admit(tt.claims, &tt.run, now, grace)
			if tt.wantKind == 0 {
				if err != nil {
					t.Fatalf("Admit = %v, want admitted", err)
				}
				return
			}
			wantKind(t, err, tt.wantKind, tt.wantMsg)
		})
	}
}

// A run much longer than a token lives keeps working: every heartbeat reply carries a fresh
// token, and the supervisor uses it. A token nobody renews expires.
func TestTokenRenewalAcrossALongRun(t *testing.T) {
	f := newFixture(t)
	f.c.Settings.TokenTTL = 7 * 24 * time.Hour
	r := f.create(t, job.Spec{Name: "long"})
	spec, err := f.c.RunSpec(t.Context(), r.ID, "", "http://ws")
	if err != nil {
		t.Fatal(err)
	}
	first, tok := spec.Token, spec.Token
	f.report(t, r.ID, job.Running)
	for day := 1; day <= 30; day++ {
		f.clock.Advance(24 * time.Hour)
		if got, err := f.c.Authenticate(t.Context(), tok); err != nil || got.ID != r.ID {
			t.Fatalf("day %d: the renewed token is refused: %v", day, err)
		}
		reply, err := f.c.Heartbeat(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if reply.Token == "" || reply.Cancel {
			t.Fatalf("day %d: heartbeat reply %+v, want a fresh token and no cancel", day, reply)
		}
		tok = reply.Token
	}
	_, err = f.c.Authenticate(t.Context(), first)
	wantKind(t, err, Unauthorized, "this token of run long expired at 2025-03-11T10:00:00Z")
	if got := f.run(t, r.ID).Status; got != job.Running {
		t.Errorf("status %s after 30 days of heartbeats, want Running", got)
	}
}

func TestAuthenticate(t *testing.T) {
	f := newFixture(t)
	f.c.Settings.TokenGrace = time.Minute
	a := f.create(t, job.Spec{Name: "a"})
	f.create(t, job.Spec{Name: "b"})
	tokA := f.c.RunToken(a.ID)
	if got, err := f.c.Authenticate(t.Context(), tokA); err != nil || got.ID != "a" || Ended(got, "its logs") != nil {
		t.Fatalf("Authenticate(a's token) = %+v, %v; want run a, not ended", got, err)
	}
	_, err := f.c.Authenticate(t.Context(), "garbage")
	wantKind(t, err, Unauthorized, "missing or invalid token")
	_, err = f.c.Authenticate(t.Context(), tokens.Run{Key: []byte("test key")}.Mint("ghost", 1, f.clock.Now().Add(time.Hour)))
	wantKind(t, err, Unauthorized, "run ghost does not exist")

	exit := 0
	if _, err := f.c.Report(t.Context(), "a", api.StatusReport{State: job.Completed, ExitCode: &exit, Time: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	got, err := f.c.Authenticate(t.Context(), tokA)
	if err != nil {
		t.Fatalf("a's token within the grace: %v", err)
	}
	// Within the grace the token still authenticates, and says the run ended: what it would
	// write is refused by the one terminal check, with the reason.
	wantKind(t, Ended(got, "its record"), Conflict, "run a ended (Completed) at 2025-03-04T10:00:00Z: its record can no longer change")
	f.clock.Advance(time.Second)
	_, err = f.c.Authenticate(t.Context(), tokA)
	wantKind(t, err, Unauthorized, "run a ended at 2025-03-04T10:00:00Z; its token is no longer valid")
}
