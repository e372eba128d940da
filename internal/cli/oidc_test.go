package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The OpenID Connect flags go together, want an https issuer (http on loopback only), and read
// the client secret from its file, never the command line.
func TestServerOIDCFlags(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--oidc-client-id", "x"}, "need --oidc-issuer"},
		{[]string{"--oidc-issuer", "https://login.example.com"}, "needs --oidc-client-id and --oidc-client-secret-file"},
		{[]string{"--oidc-issuer", "http://login.example.com", "--oidc-client-id", "x", "--oidc-client-secret-file", secret}, "must be https"},
		{[]string{"--oidc-issuer", "login.example.com", "--oidc-client-id", "x", "--oidc-client-secret-file", secret}, "not an absolute URL"},
		{[]string{"--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--oidc-client-secret-file", filepath.Join(dir, "nope")}, "--oidc-client-secret-file"},
		{[]string{"--oidc-issuer", "https://login.example.com", "--oidc-client-id", "x", "--oidc-client-secret-file", empty}, "is empty"},
	} {
		code, _, stderr := execute(t, nil, append([]string{"server", "--home", t.TempDir()}, tc.args...)...)
		if code == ExitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("server %v: exit %d %q, want an error naming %q", tc.args, code, stderr, tc.want)
		}
	}
	var got ServeOptions
	serve := func(_ context.Context, o ServeOptions) error { got = o; return nil }
	code, _, stderr := execute(t, serve, "server", "--home", t.TempDir(), "--oidc-issuer", "http://127.0.0.1:9999/realms/x",
		"--oidc-client-id", "hangar", "--oidc-client-secret-file", secret)
	want := OIDCOptions{Issuer: "http://127.0.0.1:9999/realms/x", ClientID: "hangar", ClientSecretFile: secret, ClientSecret: "s3cret"}
	if code != ExitOK || got.OIDC != want {
		t.Fatalf("exit %d %q, OIDC options %+v, want %+v", code, stderr, got.OIDC, want)
	}
}
