package tokens

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Tokens minted before the mechanism moved here (computed independently: HMAC-SHA256 of the
// domain and the message) still verify, and are what Mint makes: no token in the field dies with
// the move.
func TestFormatsUnchanged(t *testing.T) {
	k := Key("workspace-key")
	const (
		run    = "run-1.2.1767323045.18c92a956cd6b484ee6800ffadebd00f76cea92acaa73d32a6dd3f65d9863d7b"
		legacy = "run-1.0d2d9893ee68b788ee46e33356487edcc2bcb75e1af484759c01cf934182c882"
		agent  = "ha1.pool-n1.13f48947538d348389ff8f6e2243b698ed94fe2e8ca4cee79d3ad2937a00999f"
		join   = "hj1.eyJwb29sIjoiZ3B1Iiwibm9kZSI6ImdwdS1uMSIsImV4cCI6MTcwMDAwMDA2MH0.f0rVf_g9hOrzEfjDG9BIYtiEObAweDHliVthP7Wcu8o"
	)
	if got := (Run{Key: k}).Mint("run-1", 2, time.Unix(1767323045, 0)); got != run {
		t.Errorf("run token %q, want %q", got, run)
	}
	if c, ok := (Run{Key: k}).Verify(legacy); !ok || c != (RunClaims{RunID: "run-1"}) {
		t.Errorf("first-format run token: %+v, %v", c, ok)
	}
	if got := k.Agent("pool-n1"); got != agent {
		t.Errorf("agent token %q, want %q", got, agent)
	}
	if got := k.MintJoin("gpu", "gpu-n1", time.Unix(1700000060, 0)); got != join {
		t.Errorf("join token %q, want %q", got, join)
	}
}

func TestRunVerify(t *testing.T) {
	a, b := Run{Key: Key("a")}, Run{Key: Key("b")}
	exp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tok := a.Mint("run-1", 2, exp)
	legacy := "run-1." + a.Key.signHex(legacyRunDomain, "run-1") // what servers before expiries minted
	tests := []struct {
		name   string
		tokens Run
		token  string
		want   RunClaims
		wantOK bool
	}{
		{"minted", a, tok, RunClaims{RunID: "run-1", Attempt: 2, Expires: exp}, true},
		{"other key", b, tok, RunClaims{}, false},
		{"other run", a, strings.Replace(tok, "run-1", "run-2", 1), RunClaims{}, false},
		{"other attempt", a, strings.Replace(tok, ".2.", ".3.", 1), RunClaims{}, false},
		{"later expiry", a, strings.Replace(tok, ".1767323045.", ".1767323046.", 1), RunClaims{}, false},
		{"mac in upper case", a, tok[:len(tok)-64] + strings.ToUpper(tok[len(tok)-64:]), RunClaims{}, false},
		{"first format", a, legacy, RunClaims{RunID: "run-1"}, true},
		{"first format, other key", b, legacy, RunClaims{}, false},
		{"empty", a, "", RunClaims{}, false},
		{"no dot", a, "run-1", RunClaims{}, false},
		{"no run", a, "." + tok[len("run-1."):], RunClaims{}, false},
		{"attempt 0", a, "run-1.0.1767323045." + a.Key.signHex(runDomain, "run-1.0.1767323045"), RunClaims{}, false},
		{"an agent token", a, a.Key.Agent("run-1"), RunClaims{}, false},
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
	if !(RunClaims{RunID: "r"}).Legacy() || (RunClaims{RunID: "r", Attempt: 1}).Legacy() {
		t.Error("Legacy is wrong")
	}
}

func TestJoin(t *testing.T) {
	key, other := Key("workspace-key"), Key("another-key")
	now := time.Unix(1700000000, 0)
	good := key.MintJoin("gpu", "gpu-n1", now.Add(time.Minute))
	tamper := func(tok string, f func(payload string) string) string {
		rest := strings.TrimPrefix(tok, joinPrefix)
		p, mac, _ := strings.Cut(rest, ".")
		return joinPrefix + f(p) + "." + mac
	}
	otherPool := key.MintJoin("cpu", "gpu-n1", now.Add(time.Minute))
	tests := []struct {
		name   string
		key    Key
		token  string
		now    time.Time
		want   error
		pool   string
		nodeID string
	}{
		{"valid", key, good, now, nil, "gpu", "gpu-n1"},
		{"valid until the last second", key, good, now.Add(59 * time.Second), nil, "gpu", "gpu-n1"},
		{"expired", key, good, now.Add(time.Minute), ErrExpired, "", ""},
		{"another workspace's key", other, good, now, ErrInvalid, "", ""},
		{"pool swapped in from another token", key, tamper(good, func(string) string {
			p, _, _ := strings.Cut(strings.TrimPrefix(otherPool, joinPrefix), ".")
			return p
		}), now, ErrInvalid, "", ""},
		{"payload edited", key, tamper(good, func(p string) string { return p[:len(p)-2] + "AA" }), now, ErrInvalid, "", ""},
		{"signature cut", key, good[:len(good)-4], now, ErrInvalid, "", ""},
		{"no prefix", key, strings.TrimPrefix(good, joinPrefix), now, ErrInvalid, "", ""},
		{"agent token", key, key.Agent("gpu-n1"), now, ErrInvalid, "", ""},
		{"empty", key, "", now, ErrInvalid, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, node, err := tt.key.VerifyJoin(tt.token, tt.now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if pool != tt.pool || node != tt.nodeID {
				t.Errorf("got (%q, %q), want (%q, %q)", pool, node, tt.pool, tt.nodeID)
			}
		})
	}
}

func TestAgent(t *testing.T) {
	key := Key("workspace-key")
	tok := key.Agent("pool-n1")
	tests := []struct {
		name   string
		key    Key
		token  string
		wantID string
		wantOK bool
	}{
		{"valid", key, tok, "pool-n1", true},
		{"other key", Key("x"), tok, "", false},
		{"another node's id", key, strings.Replace(tok, "pool-n1", "pool-n2", 1), "", false},
		{"truncated", key, tok[:len(tok)-1], "", false},
		{"join token", key, key.MintJoin("pool", "pool-n1", time.Now().Add(time.Hour)), "", false},
		{"run token shape", key, "pool-n1.abcdef", "", false},
		{"a run token of the same id", key, (Run{Key: key}).Mint("pool-n1", 1, time.Now()), "", false},
		{"empty", key, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := tt.key.VerifyAgent(tt.token)
			if ok != tt.wantOK || (ok && id != tt.wantID) {
				t.Errorf("VerifyAgent = (%q, %v), want (%q, %v)", id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
}

// An agent reads the node its join token names before joining, without the key.
func TestJoinNode(t *testing.T) {
	tok := Key("k").MintJoin("gpu", "gpu-n7", time.Now())
	for in, want := range map[string]string{tok: "gpu-n7", Key("k").Agent("gpu-n7"): "", "hj1.!!!.x": "", "": ""} {
		if got := JoinNode(in); got != want {
			t.Errorf("JoinNode(%q) = %q, want %q", in, got, want)
		}
	}
}
