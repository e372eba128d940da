package tokens

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Join token errors.
var (
	ErrInvalid = errors.New("invalid join token")
	ErrExpired = errors.New("join token expired")
)

const (
	joinPrefix  = "hj1."
	agentPrefix = "ha1."
	joinDomain  = "join:"
	agentDomain = "agent:"
)

type joinClaims struct {
	Pool   string `json:"pool"`
	NodeID string `json:"node"`
	Exp    int64  `json:"exp"` // unix seconds
}

// MintJoin makes the short-lived token a new node's agent joins with: the cluster (pool), the
// node id and the expiry, signed. It is not stored.
func (k Key) MintJoin(pool, nodeID string, expiry time.Time) string {
	b, _ := json.Marshal(joinClaims{Pool: pool, NodeID: nodeID, Exp: expiry.Unix()})
	payload := base64.RawURLEncoding.EncodeToString(b)
	return joinPrefix + payload + "." + base64.RawURLEncoding.EncodeToString(k.sign(joinDomain, payload))
}

// VerifyJoin checks a join token's signature and expiry and returns what it was minted for.
func (k Key) VerifyJoin(token string, now time.Time) (pool, nodeID string, err error) {
	rest, ok := strings.CutPrefix(token, joinPrefix)
	if !ok {
		return "", "", ErrInvalid
	}
	payload, mac, ok := strings.Cut(rest, ".")
	if !ok {
		return "", "", ErrInvalid
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil || !k.valid(joinDomain, payload, got) {
		return "", "", ErrInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", "", ErrInvalid
	}
	var c joinClaims
	if err := json.Unmarshal(raw, &c); err != nil || c.Pool == "" || c.NodeID == "" {
		return "", "", ErrInvalid
	}
	if !now.Before(time.Unix(c.Exp, 0)) {
		return "", "", fmt.Errorf("%w at %s", ErrExpired, time.Unix(c.Exp, 0).UTC().Format(time.RFC3339))
	}
	return c.Pool, c.NodeID, nil
}

// Agent is the token a joined agent authenticates its heartbeats with: derived from the node id,
// so it survives server restarts and is never stored. The server accepts it only while the node
// exists.
func (k Key) Agent(nodeID string) string {
	return agentPrefix + nodeID + "." + k.signHex(agentDomain, nodeID)
}

// VerifyAgent returns the node an agent token belongs to.
func (k Key) VerifyAgent(token string) (nodeID string, ok bool) {
	rest, found := strings.CutPrefix(token, agentPrefix)
	i := strings.LastIndexByte(rest, '.')
	if !found || i <= 0 {
		return "", false
	}
	if !k.validHex(agentDomain, rest[:i], rest[i+1:]) {
		return "", false
	}
	return rest[:i], true
}

// JoinNode reads the node id a join token names, without verifying it (only the server can):
// an agent uses it to tell whether a saved identity is for the same node. "" when the token is
// not a join token.
func JoinNode(token string) string {
	rest, ok := strings.CutPrefix(token, joinPrefix)
	payload, _, _ := strings.Cut(rest, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if !ok || err != nil {
		return ""
	}
	var c joinClaims
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	return c.NodeID
}
