package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// PersonalPrefix starts every personal API token, so that the server tells one from a run,
// join or agent token without a lookup, and a secret scanner can spot a leaked one.
const PersonalPrefix = "hpt_"

// NewPersonal returns a new personal API token: the prefix and 256 random bits in hex. Unlike
// the other kinds it is not derived from the workspace key: the server stores its hash
// (PersonalHash) and looks it up, so that it can be revoked alone and expire on its own.
func NewPersonal() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return PersonalPrefix + hex.EncodeToString(b[:])
}

// IsPersonal reports whether tok has the shape of a personal token.
func IsPersonal(tok string) bool {
	return strings.HasPrefix(tok, PersonalPrefix) && len(tok) == len(PersonalPrefix)+64
}

// PersonalHash is what the server stores of a personal token: its SHA-256 in hex. A slow hash
// is not needed: the token is 256 random bits, not a password that can be guessed.
func PersonalHash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}
