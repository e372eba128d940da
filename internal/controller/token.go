package controller

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Tokens lets a run's supervisor authenticate as that run. A token is "<run id>.<hmac>", derived
// from a workspace secret, so it need not be stored and survives a restart mid-submit.
type Tokens struct{ Key []byte }

// For returns the token of a run.
func (t Tokens) For(runID string) string {
	m := hmac.New(sha256.New, t.Key)
	m.Write([]byte("run:" + runID))
	return runID + "." + hex.EncodeToString(m.Sum(nil))
}

// Verify returns the run a token belongs to.
func (t Tokens) Verify(token string) (runID string, ok bool) {
	id, _, found := strings.Cut(token, ".")
	if !found || id == "" {
		return "", false
	}
	return id, hmac.Equal([]byte(t.For(id)), []byte(token))
}
