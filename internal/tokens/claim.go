package tokens

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// claimDomain keeps a replica claim token from ever verifying as another kind of token.
const claimDomain = "replica-claim/1:"

const claimPrefix = "hrc1."

// ClaimScope is what a replica claim token opens: the runs of one Kubernetes Deployment (one
// online deployment of one workspace) on one target, and nothing else. UID binds it to that
// Deployment object: a Deployment made again under the same name gets another token.
type ClaimScope struct {
	Target     string `json:"t"`
	Namespace  string `json:"n"`
	Deployment string `json:"d"`
	UID        string `json:"u"`
}

// Claim mints and verifies replica claim tokens, "hrc1.<scope>.<mac>" (<scope> is base64url
// JSON): the pods of an online deployment's Kubernetes Deployment are identical, so each holds
// this deployment-scoped token and claims a replica run with it (POST /api/replica-claims). It
// has no expiry: it lives in a Secret owned by the Deployment and is worth nothing once that
// Deployment is gone (the UID no longer matches).
type Claim struct{ Key Key }

// Mint returns the claim token of a Deployment.
func (t Claim) Mint(s ClaimScope) string {
	data, _ := json.Marshal(s) // a struct of strings: never fails
	body := base64.RawURLEncoding.EncodeToString(data)
	return claimPrefix + body + "." + t.Key.signHex(claimDomain, body)
}

// Verify returns the scope a token with a valid MAC was minted for.
func (t Claim) Verify(token string) (ClaimScope, bool) {
	rest, ok := strings.CutPrefix(token, claimPrefix)
	if !ok {
		return ClaimScope{}, false
	}
	body, mac, ok := strings.Cut(rest, ".")
	if !ok || !t.Key.validHex(claimDomain, body, mac) {
		return ClaimScope{}, false
	}
	data, err := base64.RawURLEncoding.DecodeString(body)
	var s ClaimScope
	if err != nil || json.Unmarshal(data, &s) != nil || s.Target == "" || s.Namespace == "" || s.Deployment == "" || s.UID == "" {
		return ClaimScope{}, false
	}
	return s, true
}
