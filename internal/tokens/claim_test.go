package tokens

import (
	"strings"
	"testing"
	"time"
)

func TestClaimToken(t *testing.T) {
	key := Key("workspace-key")
	a := ClaimScope{Target: "kube", Namespace: "ns", Deployment: "hangar-e-blue-1234", UID: "u-1"}
	tok := Claim{Key: key}.Mint(a)
	if got, ok := (Claim{Key: key}).Verify(tok); !ok || got != a {
		t.Fatalf("Verify(Mint(a)) = %+v, %v; want %+v", got, ok, a)
	}
	other := Claim{Key: key}.Mint(ClaimScope{Target: "kube", Namespace: "ns", Deployment: "hangar-e-green-5678", UID: "u-2"})
	body, _, _ := strings.Cut(strings.TrimPrefix(other, claimPrefix), ".")
	_, mac, _ := strings.Cut(strings.TrimPrefix(tok, claimPrefix), ".")
	for name, bad := range map[string]string{
		"other key":               Claim{Key: Key("another")}.Mint(a),
		"scope of B with A's mac": claimPrefix + body + "." + mac,
		"run token":               Run{Key: key}.Mint("run-1", 1, time.Unix(1e9, 0)),
		"no prefix":               strings.TrimPrefix(tok, claimPrefix),
		"empty":                   "",
		"empty scope":             Claim{Key: key}.Mint(ClaimScope{}),
	} {
		if s, ok := (Claim{Key: key}).Verify(bad); ok {
			t.Errorf("%s: verified as %+v", name, s)
		}
	}
}
