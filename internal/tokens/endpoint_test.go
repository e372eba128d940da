package tokens

import (
	"testing"
	"time"
)

func TestEndpointVerify(t *testing.T) {
	k := Endpoint{Key: Key("workspace key")}
	now := time.Unix(1_800_000_000, 0)
	tok := k.Mint("ep-a", now.Add(time.Hour))
	other := Endpoint{Key: Key("another workspace")}.Mint("ep-a", now.Add(time.Hour))
	tests := []struct {
		name, token, endpoint string
		at                    time.Time
		want                  bool
	}{
		{"its endpoint, in time", tok, "ep-a", now, true},
		{"another endpoint", tok, "ep-b", now, false},
		{"an endpoint whose name ends like it", tok, "a", now, false},
		{"expired", tok, "ep-a", now.Add(time.Hour), false},
		{"another workspace's key", other, "ep-a", now, false},
		{"a longer expiry spliced in", "het1.ep-a.1900000000." + tok[len(tok)-64:], "ep-a", now, false},
		{"a studio session", Studio{Key: k.Key}.Mint("ep-a", now.Add(time.Hour)), "ep-a", now, false},
		{"empty", "", "ep-a", now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := k.Verify(tt.token, tt.endpoint, tt.at); got != tt.want {
				t.Errorf("Verify(%q, %q) = %v, want %v", tt.token, tt.endpoint, got, tt.want)
			}
		})
	}
}
