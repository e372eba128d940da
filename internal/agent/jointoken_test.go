package agent

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestJoinToken(t *testing.T) {
	key, other := []byte("workspace-key"), []byte("another-key")
	now := time.Unix(1700000000, 0)
	good := MintJoinToken(key, "gpu", "gpu-n1", now.Add(time.Minute))
	tamper := func(tok string, f func(payload string) string) string {
		rest := strings.TrimPrefix(tok, joinPrefix)
		p, mac, _ := strings.Cut(rest, ".")
		return joinPrefix + f(p) + "." + mac
	}
	otherPool := MintJoinToken(key, "cpu", "gpu-n1", now.Add(time.Minute))
	tests := []struct {
		name   string
		key    []byte
		token  string
		now    time.Time
		want   error
		pool   string
		nodeID string
	}{
		{"valid", key, good, now, nil, "gpu", "gpu-n1"},
		{"valid until the last second", key, good, now.Add(59 * time.Second), nil, "gpu", "gpu-n1"},
		{"expired", key, good, now.Add(time.Minute), ErrTokenExpired, "", ""},
		{"another workspace's key", other, good, now, ErrTokenInvalid, "", ""},
		{"pool swapped in from another token", key, tamper(good, func(string) string {
			p, _, _ := strings.Cut(strings.TrimPrefix(otherPool, joinPrefix), ".")
			return p
		}), now, ErrTokenInvalid, "", ""},
		{"payload edited", key, tamper(good, func(p string) string { return p[:len(p)-2] + "AA" }), now, ErrTokenInvalid, "", ""},
		{"signature cut", key, good[:len(good)-4], now, ErrTokenInvalid, "", ""},
		{"no prefix", key, strings.TrimPrefix(good, joinPrefix), now, ErrTokenInvalid, "", ""},
		{"agent token", key, AgentToken(key, "gpu-n1"), now, ErrTokenInvalid, "", ""},
		{"empty", key, "", now, ErrTokenInvalid, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, node, err := VerifyJoinToken(tt.key, tt.token, tt.now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if pool != tt.pool || node != tt.nodeID {
				t.Errorf("got (%q, %q), want (%q, %q)", pool, node, tt.pool, tt.nodeID)
			}
		})
	}
}

func TestAgentToken(t *testing.T) {
	key := []byte("workspace-key")
	tok := AgentToken(key, "pool-n1")
	tests := []struct {
		name   string
		key    []byte
		token  string
		wantID string
		wantOK bool
	}{
		{"valid", key, tok, "pool-n1", true},
		{"other key", []byte("x"), tok, "", false},
		{"another node's id", key, strings.Replace(tok, "pool-n1", "pool-n2", 1), "", false},
		{"truncated", key, tok[:len(tok)-1], "", false},
		{"join token", key, MintJoinToken(key, "pool", "pool-n1", time.Now().Add(time.Hour)), "", false},
		{"run token shape", key, "pool-n1.abcdef", "", false},
		{"empty", key, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := VerifyAgentToken(tt.key, tt.token)
			if ok != tt.wantOK || (ok && id != tt.wantID) {
				t.Errorf("VerifyAgentToken = (%q, %v), want (%q, %v)", id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
}
