package webhook

import (
	"encoding/json"
	"testing"
	"time"
)

// The signature is MLflow's: computed here by Python's hmac for the same inputs
// (base64(hmac.new(b"whsec", b'd-1.1700000000.{"a": 1}', sha256).digest())).
func TestSignIsMLflows(t *testing.T) {
	got := Sign("whsec", "d-1", "1700000000", []byte(`{"a": 1}`))
	if want := "v1,3XP2G5cemgPNTI7NCUQrgGnKg5B6kyM5wXFmQVtxhAY="; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
	if !Verify("whsec", "d-1", "1700000000", []byte(`{"a": 1}`), got) {
		t.Error("Verify refuses its own signature")
	}
	for _, bad := range []struct{ secret, id, ts, body, sig string }{
		{"other", "d-1", "1700000000", `{"a": 1}`, got},
		{"whsec", "d-2", "1700000000", `{"a": 1}`, got},
		{"whsec", "d-1", "1700000001", `{"a": 1}`, got},
		{"whsec", "d-1", "1700000000", `{"a": 2}`, got},
		{"whsec", "d-1", "1700000000", `{"a": 1}`, "v2," + got[3:]},
	} {
		if Verify(bad.secret, bad.id, bad.ts, []byte(bad.body), bad.sig) {
			t.Errorf("Verify takes %+v", bad)
		}
	}
}

// The body is MLflow's envelope, its timestamp the event's, as Python's isoformat writes UTC.
func TestBody(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 1, 500_000_000, time.UTC)
	b, err := Body("model_version_alias.created", json.RawMessage(`{"name":"m","alias":"a","version":"1"}`), at)
	want := `{"entity":"model_version_alias","action":"created","timestamp":"2026-12-07T10:00:01.500000+00:00","data":{"name":"m","alias":"a","version":"1"}}`
	if err != nil || string(b) != want {
		t.Errorf("Body = %s, %v\nwant   %s", b, err, want)
	}
}

// Events from MLflow's WebhookEvent JSON: enum names in any case or numbers; prompts and
// impossible pairs refused.
func TestEventOf(t *testing.T) {
	for _, tc := range []struct{ entity, action, want string }{
		{`"MODEL_VERSION"`, `"CREATED"`, "model_version.created"},
		{`"model_version_tag"`, `"deleted"`, "model_version_tag.deleted"},
		{`4`, `1`, "model_version_alias.created"},
		{`"PROMPT"`, `"CREATED"`, ""},
		{`"REGISTERED_MODEL"`, `"DELETED"`, ""},
		{`"MODEL_VERSION"`, `9`, ""},
		{`null`, `"CREATED"`, ""},
	} {
		got, err := EventOf(json.RawMessage(tc.entity), json.RawMessage(tc.action))
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("EventOf(%s, %s) = %q, %v; want %q", tc.entity, tc.action, got, err, tc.want)
		}
	}
}
