package secrets

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{{"", ""}, {"hunter2", "***"}}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := RedactIn("sshpass -p hunter2 ssh u@h; echo hunter2", "hunter2", ""); got != "sshpass -p *** ssh u@h; echo ***" {
		t.Errorf("RedactIn = %q", got)
	}
}

func TestSecretPrints(t *testing.T) {
	s := Secret("hunter2")
	type cfg struct {
		User     string
		Password Secret
	}
	for _, format := range []string{"%v", "%s", "%q", "%x", "%#v", "%+v", "%10s"} {
		for _, arg := range []any{s, cfg{"u", s}, &cfg{"u", s}} {
			if got := fmt.Sprintf(format, arg); strings.Contains(got, "hunter2") || strings.Contains(got, fmt.Sprintf("%x", "hunter2")) {
				t.Errorf("Sprintf(%s, %T) = %s: leaks the secret", format, arg, got)
			}
		}
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("attach", "password", s)
	if strings.Contains(buf.String(), "hunter2") || !strings.Contains(buf.String(), `"password":"***"`) {
		t.Errorf("slog: %s", buf.String())
	}
	if s.Reveal() != "hunter2" {
		t.Error("Reveal lost the value")
	}
}
