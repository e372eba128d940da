package tokens

import (
	"strings"
	"testing"
	"time"
)

// A replica's secret is one per run attempt and workspace, and is no other kind of token.
func TestReplicaSecret(t *testing.T) {
	k := Replica{Key: Key("workspace key")}
	s := k.Secret("run-a", 1)
	if !strings.HasPrefix(s, "hrs1.") || len(s) != len("hrs1.")+64 {
		t.Fatalf("secret %q: want hrs1. and 64 hex digits", s)
	}
	for _, tt := range []struct {
		name, other string
	}{
		{"another run", k.Secret("run-b", 1)},
		{"another attempt", k.Secret("run-a", 2)},
		{"another workspace", Replica{Key: Key("another key")}.Secret("run-a", 1)},
		{"the run's token", Run{Key: k.Key}.Mint("run-a", 1, time.Unix(1_800_000_000, 0))},
	} {
		if tt.other == s || strings.HasSuffix(tt.other, s[len("hrs1."):]) {
			t.Errorf("%s: %q shares the secret %q", tt.name, tt.other, s)
		}
	}
	if k.Secret("run-a", 0) != s {
		t.Errorf("attempt 0 (a run never requeued) differs from attempt 1")
	}
	if _, ok := (Run{Key: k.Key}).Verify(s); ok {
		t.Errorf("the secret verifies as a run token")
	}
}
