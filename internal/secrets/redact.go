package secrets

import (
	"fmt"
	"log/slog"
	"strings"
)

// Redacted is what secrets print as.
const Redacted = "***"

// Redact returns "***" for a non-empty secret and "" for an empty one (so "not set" still shows).
func Redact(s string) string {
	if s == "" {
		return ""
	}
	return Redacted
}

// RedactIn replaces every occurrence of each non-empty secret in text with "***", for messages
// (command lines, error output) that may have picked one up.
func RedactIn(text string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, Redacted)
		}
	}
	return text
}

// Secret is a string that prints as "***" with fmt (every verb, %#v included) and slog; Reveal
// returns the value. Its JSON form is the value itself: encrypt it before storing.
type Secret string

// Reveal returns the secret.
func (s Secret) Reveal() string { return string(s) }

// String returns "***" ("" when empty).
func (s Secret) String() string { return Redact(string(s)) }

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return `secrets.Secret("` + s.String() + `")` }

// Format applies to every fmt verb.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprint(f, s.String())
}

// LogValue keeps slog from printing the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }
