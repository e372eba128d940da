package serving

import (
	"strings"
	"testing"
	"time"
)

func TestDecideAlias(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	base := AliasInput{Model: "iris", Alias: "champion", Serving: "1", Target: "1", Now: t0}
	with := func(f func(in *AliasInput)) AliasInput {
		in := base
		f(&in)
		return in
	}
	tests := []struct {
		name    string
		in      AliasInput
		roll    string
		warnHas string
	}{
		{"alias where it was", base, "", ""},
		{"alias moved", with(func(in *AliasInput) { in.Target = "2" }), "2", ""},
		{"alias moved back", with(func(in *AliasInput) { in.Serving, in.Target = "2", "1" }), "1", ""},
		{"alias gone: keep serving", with(func(in *AliasInput) { in.Target = "" }), "",
			"model iris has no alias champion any more: still serving version 1"},
		{"roll to it failed just now: wait", with(func(in *AliasInput) {
			in.Target, in.Failed, in.FailedAt, in.FailedWhy = "2", "2", t0.Add(-10*time.Second), "environment: no such image"
		}), "", "rolling to it failed (environment: no such image): still serving version 1, trying again at 2026-12-07T17:00:20Z"},
		{"roll to it failed long enough ago: try again", with(func(in *AliasInput) {
			in.Target, in.Failed, in.FailedAt = "2", "2", t0.Add(-AliasRetry)
		}), "2", ""},
		{"a roll to another version failed: try the new one at once", with(func(in *AliasInput) {
			in.Target, in.Failed, in.FailedAt = "3", "2", t0
		}), "3", ""},
		{"failed to the version it now serves (alias moved back): nothing", with(func(in *AliasInput) {
			in.Failed, in.FailedAt = "1", t0
		}), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DecideAlias(tt.in)
			if got.Roll != (tt.roll != "") || got.To != tt.roll {
				t.Errorf("roll = %v to %q, want to %q", got.Roll, got.To, tt.roll)
			}
			if (tt.warnHas == "") != (got.Warning == "") || !strings.Contains(got.Warning, tt.warnHas) {
				t.Errorf("warning = %q, want one with %q", got.Warning, tt.warnHas)
			}
		})
	}
}
