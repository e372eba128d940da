package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

func TestTokensVerify(t *testing.T) {
	a, b := Tokens{Key: []byte("a")}, Tokens{Key: []byte("b")}
	exp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tok := a.Mint("run-1", 2, exp)
	legacy := "run-1." + a.mac("run:run-1") // what servers before expiries minted
	tests := []struct {
		name   string
		tokens Tokens
		token  string
		want   Claims
		wantOK bool
	}{
		{"minted", a, tok, Claims{RunID: "run-1", Attempt: 2, Expires: exp}, true},
		{"other key", b, tok, Claims{}, false},
		{"other run", a, strings.Replace(tok, "run-1", "run-2", 1), Claims{}, false},
		{"other attempt", a, strings.Replace(tok, ".2.", ".3.", 1), Claims{}, false},
		{"later expiry", a, strings.Replace(tok, ".1767323045.", ".1767323046.", 1), Claims{}, false},
		{"first format", a, legacy, Claims{RunID: "run-1"}, true},
		{"first format, other key", b, legacy, Claims{}, false},
		{"empty", a, "", Claims{}, false},
		{"no dot", a, "run-1", Claims{}, false},
		{"no run", a, "." + tok[len("run-1."):], Claims{}, false},
		{"attempt 0", a, "run-1.0.1767323045." + a.mac("run-token/2:run-1.0.1767323045"), Claims{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.tokens.Verify(tt.token)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Verify(%q) = %+v, %v; want %+v, %v", tt.token, got, ok, tt.want, tt.wantOK)
			}
		})
	}
	if !strings.Contains(tok, ".1767323045.") {
		t.Fatalf("token %q does not carry its expiry in seconds (the cases above assume it)", tok)
	}
}

func TestAdmit(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	live := Claims{RunID: "r", Attempt: 1, Expires: now.Add(time.Hour)}
	expired := Claims{RunID: "r", Attempt: 1, Expires: now.Add(-time.Second)}
	legacy := Claims{RunID: "r"}
	const grace = 2 * time.Minute
	tests := []struct {
		name     string
		claims   Claims
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
		if id, err := f.c.Authenticate(t.Context(), tok); err != nil || id != r.ID {
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
	if id, err := f.c.Authenticate(t.Context(), tokA); err != nil || id != "a" {
		t.Fatalf("Authenticate(a's token) = %q, %v", id, err)
	}
	_, err := f.c.Authenticate(t.Context(), "garbage")
	wantKind(t, err, Unauthorized, "missing or invalid token")
	_, err = f.c.Authenticate(t.Context(), Tokens{Key: []byte("test key")}.Mint("ghost", 1, f.clock.Now().Add(time.Hour)))
	wantKind(t, err, Unauthorized, "run ghost does not exist")

	exit := 0
	if _, err := f.c.Report(t.Context(), "a", api.StatusReport{State: job.Completed, ExitCode: &exit, Time: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	if _, err := f.c.Authenticate(t.Context(), tokA); err != nil {
		t.Errorf("a's token within the grace: %v", err)
	}
	f.clock.Advance(time.Second)
	_, err = f.c.Authenticate(t.Context(), tokA)
	wantKind(t, err, Unauthorized, "run a ended at 2025-03-04T10:00:00Z; its token is no longer valid")
}
