package tokens

import (
	"testing"
	"time"
)

func TestStudioVerify(t *testing.T) {
	a, b := Studio{Key: Key("a")}, Studio{Key: Key("b")}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tok := a.Mint("s1", now.Add(time.Hour))
	run := (Run{Key: Key("a")}).Mint("s1", 1, now.Add(time.Hour))
	tests := []struct {
		name  string
		key   Studio
		token string
		at    time.Time
		want  bool
	}{
		{"valid", a, tok, now, true},
		{"expired", a, tok, now.Add(time.Hour), false},
		{"other key", b, tok, now, false},
		{"expiry changed", a, "hs1.s1." + "9999999999." + tok[len(tok)-64:], now, false},
		{"a run token is not a session", a, run, now, false},
		{"studio prefix on a run token", a, "hs1." + run, now, false},
		{"empty", a, "", now, false},
		{"no session", a, a.Mint("", now.Add(time.Hour)), now, false},
	}
	for _, tt := range tests {
		if got := tt.key.Verify(tt.token, tt.at); got != tt.want {
			t.Errorf("%s: Verify = %v, want %v", tt.name, got, tt.want)
		}
	}
}
