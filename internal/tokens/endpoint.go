package tokens

import (
	"strconv"
	"strings"
	"time"
)

// endpointDomain keeps an endpoint token from ever verifying as another kind of token.
const endpointDomain = "endpoint-token/1:"

const endpointPrefix = "het1."

// Endpoint mints and checks the short-lived tokens of online endpoints with auth_mode aml_token,
// "het1.<endpoint>.<expiry>.<mac>": a token opens one endpoint's scoring URI until its expiry,
// nothing else (not the workspace's API, not another endpoint).
type Endpoint struct{ Key Key }

// Mint returns a token for endpoint valid until expires.
func (t Endpoint) Mint(endpoint string, expires time.Time) string {
	body := endpoint + "." + strconv.FormatInt(expires.Unix(), 10)
	return endpointPrefix + body + "." + t.Key.signHex(endpointDomain, body)
}

// Verify says whether token was minted for endpoint by this key and has not expired at now.
func (t Endpoint) Verify(token, endpoint string, now time.Time) bool {
	rest, ok := strings.CutPrefix(token, endpointPrefix)
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return false
	}
	body, mac := rest[:i], rest[i+1:]
	j := strings.LastIndexByte(body, '.')
	if j < 0 || body[:j] != endpoint || !t.Key.validHex(endpointDomain, body, mac) {
		return false
	}
	exp, err := strconv.ParseInt(body[j+1:], 10, 64)
	return err == nil && now.Before(time.Unix(exp, 0))
}
