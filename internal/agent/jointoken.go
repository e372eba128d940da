package agent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Token errors.
var (
	ErrTokenInvalid = errors.New("invalid join token")
	ErrTokenExpired = errors.New("join token expired")
)

const (
	joinPrefix  = "hj1."
	agentPrefix = "ha1."
)

type joinClaims struct {
	Pool   string `json:"pool"`
	NodeID string `json:"node"`
	Exp    int64  `json:"exp"` // unix seconds
}

// MintJoinToken makes the short-lived token a new node's agent joins with: the cluster (pool),
// the node id and the expiry, signed with the workspace key. It is not stored.
func MintJoinToken(key []byte, pool, nodeID string, expiry time.Time) string {
	b, _ := json.Marshal(joinClaims{Pool: pool, NodeID: nodeID, Exp: expiry.Unix()})
	payload := base64.RawURLEncoding.EncodeToString(b)
	return joinPrefix + payload + "." + base64.RawURLEncoding.EncodeToString(sign(key, "join:"+payload))
}

// VerifyJoinToken checks a join token's signature and expiry and returns what it was minted for.
func VerifyJoinToken(key []byte, token string, now time.Time) (pool, nodeID string, err error) {
	rest, ok := strings.CutPrefix(token, joinPrefix)
	if !ok {
		return "", "", ErrTokenInvalid
	}
	payload, mac, ok := strings.Cut(rest, ".")
	if !ok {
		return "", "", ErrTokenInvalid
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil || !hmac.Equal(got, sign(key, "join:"+payload)) {
		return "", "", ErrTokenInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", "", ErrTokenInvalid
	}
	var c joinClaims
	if err := json.Unmarshal(raw, &c); err != nil || c.Pool == "" || c.NodeID == "" {
		return "", "", ErrTokenInvalid
	}
	if !now.Before(time.Unix(c.Exp, 0)) {
		return "", "", fmt.Errorf("%w at %s", ErrTokenExpired, time.Unix(c.Exp, 0).UTC().Format(time.RFC3339))
	}
	return c.Pool, c.NodeID, nil
}

// AgentToken is the token a joined agent authenticates its heartbeats with: derived from the node
// id and the workspace key, so it survives server restarts and is never stored. The server
// accepts it only while the node exists.
func AgentToken(key []byte, nodeID string) string {
	return agentPrefix + nodeID + "." + hex.EncodeToString(sign(key, "agent:"+nodeID))
}

// VerifyAgentToken returns the node an agent token belongs to.
func VerifyAgentToken(key []byte, token string) (nodeID string, ok bool) {
	rest, found := strings.CutPrefix(token, agentPrefix)
	i := strings.LastIndexByte(rest, '.')
	if !found || i <= 0 {
		return "", false
	}
	id := rest[:i]
	return id, hmac.Equal([]byte(AgentToken(key, id)), []byte(token))
}

func sign(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
