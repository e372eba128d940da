package tokens

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Key is the workspace's secret that every token derives from (the store's run_token_key).
type Key []byte

// sign is the MAC of msg in a token kind's domain.
func (k Key) sign(domain, msg string) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(domain))
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// valid reports whether mac is msg's MAC in domain, in constant time.
func (k Key) valid(domain, msg string, mac []byte) bool {
	return hmac.Equal(mac, k.sign(domain, msg))
}

// signHex is sign in lower-case hex, as run and agent tokens carry it.
func (k Key) signHex(domain, msg string) string { return hex.EncodeToString(k.sign(domain, msg)) }

// validHex reports whether mac is exactly signHex's text (no other spelling of the same bytes).
func (k Key) validHex(domain, msg, mac string) bool {
	return hmac.Equal([]byte(mac), []byte(k.signHex(domain, msg)))
}
