package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

// fakeWhoAmI answers GET /api/whoami for one token, 401 otherwise.
func fakeWhoAmI(t *testing.T, token string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/whoami" || r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: "unknown token", Code: api.CodeAuth})
			return
		}
		_ = json.NewEncoder(w).Encode(api.WhoAmI{User: "rita", Role: api.RoleReader})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func runLogin(t *testing.T, url, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(stdin), terminal: func(io.Reader) bool { return false }}
	root := newRoot(env)
	root.SetArgs(append([]string{"--workspace", url}, args...))
	code = Execute(t.Context(), root, &errOut)
	return code, out.String(), errOut.String()
}

// login checks the token, stores it 0600 by URL, and later commands use it without
// $HANGAR_TOKEN; $HANGAR_TOKEN comes first; logout forgets it.
func TestLoginStoresTheTokenByWorkspace(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("HANGAR_HOME", t.TempDir())
	t.Setenv("HANGAR_TOKEN", "")
	tok := "hpt_" + strings.Repeat("ab", 32)
	url := fakeWhoAmI(t, tok)
	path := filepath.Join(config, "hangar", "credentials.json")

	if code, _, stderr := runLogin(t, url, "hpt_wrong\n", "login", "--with-token"); code != 1 || !strings.Contains(stderr, "unknown token") {
		t.Fatalf("login with a bad token: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a refused login stored credentials: %v", err)
	}
	if code, _, stderr := runLogin(t, url, tok+"\n", "login"); code != 2 || !strings.Contains(stderr, "--with-token") {
		t.Fatalf("login from a pipe without --with-token: exit %d, %s", code, stderr)
	}
	code, _, stderr := runLogin(t, url+"/", tok+"\n", "login", "--with-token")
	if code != 0 || !strings.Contains(stderr, "as rita (reader)") {
		t.Fatalf("login: exit %d, %s", code, stderr)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, mode %v; want 0600", err, fi.Mode())
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"`+url+`"`) || !strings.Contains(string(b), tok) {
		t.Fatalf("credentials file is not keyed by %s: %s", url, b)
	}
	if code, out, stderr := runLogin(t, url, "", "whoami"); code != 0 || !strings.Contains(out, "rita (reader)") {
		t.Fatalf("whoami with the stored token: exit %d, %q %s", code, out, stderr)
	}
	t.Setenv("HANGAR_TOKEN", "hpt_other")
	if code, _, _ := runLogin(t, url, "", "whoami"); code != 1 {
		t.Fatalf("whoami with $HANGAR_TOKEN set: exit %d, want 1 (the env token comes first)", code)
	}
	t.Setenv("HANGAR_TOKEN", "")
	if code, _, stderr := runLogin(t, url, "", "logout"); code != 0 || !strings.Contains(stderr, "Logged out") {
		t.Fatalf("logout: exit %d, %s", code, stderr)
	}
	if code, _, _ := runLogin(t, url, "", "whoami"); code != 1 {
		t.Fatalf("whoami after logout: exit %d, want 1", code)
	}
}

func TestParseDays(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{{"", 0, true}, {"30d", 30, true}, {"7", 7, true}, {"0d", 0, false}, {"1w", 0, false}, {"-3d", 0, false}} {
		got, err := parseDays(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("parseDays(%q) = %d, %v", tt.in, got, err)
		}
	}
}
