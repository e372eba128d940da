package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestSSHUpgradeOK(t *testing.T) {
	cases := []struct {
		name       string
		connection string
		upgrade    string
		body       string
		ok         bool
	}{
		{"upgrade", "Upgrade", "hangar-ssh", "", true},
		{"listed with keep-alive", "keep-alive, upgrade", "Hangar-SSH", "", true},
		{"no upgrade", "", "", "", false},
		{"a websocket", "Upgrade", "websocket", "", false},
		{"a body", "Upgrade", "hangar-ssh", "data", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/instances/dev/ssh", strings.NewReader(c.body))
			if c.body == "" {
				r = httptest.NewRequest(http.MethodGet, "/instances/dev/ssh", nil)
			}
			if c.connection != "" {
				r.Header.Set("Connection", c.connection)
			}
			if c.upgrade != "" {
				r.Header.Set("Upgrade", c.upgrade)
			}
			if err := sshUpgradeOK(r); (err == nil) != c.ok {
				t.Errorf("sshUpgradeOK: %v, want ok %v", err, c.ok)
			}
		})
	}
}
