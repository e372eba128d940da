package tokens

import (
	"strconv"
	"strings"
	"time"
)

// Domains of run tokens: the current format and the first one (before expiries).
const (
	runDomain       = "run-token/2:"
	legacyRunDomain = "run:"
)

// Run mints and verifies run tokens, "<run id>.<attempt>.<expiry>.<mac>" (design records 0001
// and 0004). Binding the attempt keeps a superseded attempt's supervisor out even when it omits
// the attempt header; the expiry bounds what a leaked token is worth (supervisors renew theirs).
type Run struct{ Key Key }

// RunClaims is what a run token with a valid MAC says.
type RunClaims struct {
	RunID string
	// Attempt is the run attempt the token was minted for; 0 for a token of the first format
	// ("<run id>.<mac>", before expiries), which is bound to neither an attempt nor a time.
	Attempt int
	// Expires is when the token stops being valid (zero for the first format).
	Expires time.Time
}

// Legacy reports whether the token has the first format, minted by a server before expiries.
func (c RunClaims) Legacy() bool { return c.Attempt == 0 }

// Mint returns the token of a run's attempt, valid until expires (to the second).
func (t Run) Mint(runID string, attempt int, expires time.Time) string {
	body := runID + "." + strconv.Itoa(max(attempt, 1)) + "." + strconv.FormatInt(expires.Unix(), 10)
	return body + "." + t.Key.signHex(runDomain, body)
}

// Verify checks a token's MAC and returns what it says. It does not judge expiry or the run's
// state: the controller does, with the run at hand.
func (t Run) Verify(token string) (RunClaims, bool) {
	parts := strings.Split(token, ".")
	switch {
	case len(parts) == 4 && parts[0] != "":
		attempt, aerr := strconv.Atoi(parts[1])
		exp, eerr := strconv.ParseInt(parts[2], 10, 64)
		body := strings.Join(parts[:3], ".")
		if aerr != nil || eerr != nil || attempt < 1 || !t.Key.validHex(runDomain, body, parts[3]) {
			return RunClaims{}, false
		}
		return RunClaims{RunID: parts[0], Attempt: attempt, Expires: time.Unix(exp, 0).UTC()}, true
	case len(parts) == 2 && parts[0] != "":
		// The first format, still held by supervisors started before an upgrade.
		if !t.Key.validHex(legacyRunDomain, parts[0], parts[1]) {
			return RunClaims{}, false
		}
		return RunClaims{RunID: parts[0]}, true
	}
	return RunClaims{}, false
}
