package tokens

import (
	"strconv"
	"strings"
	"time"
)

// studioDomain keeps a studio session from ever verifying as another kind of token.
const studioDomain = "studio-session/1:"

// Studio mints and checks the web studio's session cookies, "hs1.<session>.<expiry>.<mac>": a
// browser that logged in with a one-time code reads the workspace (and may cancel runs) until
// the expiry. Its key is derived from the workspace token, so replacing that token ends every
// session.
type Studio struct{ Key Key }

const studioPrefix = "hs1."

// Mint returns a session token for session (random, chosen by the caller) valid until expires.
func (t Studio) Mint(session string, expires time.Time) string {
	body := session + "." + strconv.FormatInt(expires.Unix(), 10)
	return studioPrefix + body + "." + t.Key.signHex(studioDomain, body)
}

// Verify says whether token is a session this key minted that has not expired at now.
func (t Studio) Verify(token string, now time.Time) bool {
	rest, ok := strings.CutPrefix(token, studioPrefix)
	parts := strings.Split(rest, ".")
	if !ok || len(parts) != 3 || parts[0] == "" {
		return false
	}
	body := parts[0] + "." + parts[1]
	if !t.Key.validHex(studioDomain, body, parts[2]) {
		return false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	return err == nil && now.Before(time.Unix(exp, 0))
}

// Session returns the session a valid, unexpired token was minted for; ok is false otherwise.
func (t Studio) Session(token string, now time.Time) (session string, ok bool) {
	if !t.Verify(token, now) {
		return "", false
	}
	rest := strings.TrimPrefix(token, studioPrefix)
	return rest[:strings.IndexByte(rest, '.')], true
}
