package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
)

func TestDecideTrust(t *testing.T) {
	const a, b = "SHA256:aaa", "SHA256:bbb"
	for _, tc := range []struct {
		name                  string
		pinned, seen, offered string
		terminal              bool
		want                  trustAction
	}{
		{"pinned", a, a, "", false, trustAccept},
		{"pinned, offered again", a, a, a, false, trustAccept},
		{"changed", a, b, "", true, trustChanged},
		{"changed, even when the new one is offered", a, b, b, false, trustChanged},
		{"offered", "", a, a, false, trustPin},
		{"offered another", "", a, b, true, trustMismatch},
		{"terminal asks", "", a, "", true, trustAsk},
		{"no terminal refuses", "", a, "", false, trustUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decideTrust(tc.pinned, tc.seen, tc.offered, tc.terminal); got != tc.want {
				t.Errorf("decideTrust = %d, want %d", got, tc.want)
			}
		})
	}
}

// trustCase is a workspace server over TLS with a certificate no root vouches for, and a user
// with an empty config directory.
type trustCase struct {
	srv  *httptest.Server
	addr string
	fp   string
	file string
}

func newTrustCase(t *testing.T) trustCase {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv(FingerprintEnv, "")
	u, _ := url.Parse(srv.URL)
	return trustCase{srv: srv, addr: u.Host, fp: api.Fingerprint(srv.Certificate()), file: filepath.Join(cfg, "hangar", "known_servers")}
}

// connect is what a command does: verify the server, then call it.
func (tc trustCase) connect(t *testing.T, env *Env) error {
	t.Helper()
	verify, err := env.serverTrust(context.Background(), tc.srv.URL)
	if err != nil {
		return err
	}
	_, err = api.NewClient(tc.srv.URL, "", verify).Health(context.Background())
	return err
}

func trustEnv(stdin string, terminal bool) (*Env, *bytes.Buffer) {
	var errb bytes.Buffer
	return &Env{Stdout: io.Discard, Stderr: &errb, Stdin: strings.NewReader(stdin),
		terminal: func(io.Reader) bool { return terminal }}, &errb
}

// Without a terminal an unknown certificate is refused, naming its fingerprint and how to accept
// it; accepted by --trust-fingerprint it is pinned (0600) and later connections need nothing.
func TestServerTrustFirstUse(t *testing.T) {
	tc := newTrustCase(t)
	env, _ := trustEnv("yes\n", false)
	err := tc.connect(t, env)
	if err == nil || !strings.Contains(err.Error(), tc.fp) || !strings.Contains(err.Error(), "--trust-fingerprint "+tc.fp) ||
		!strings.Contains(err.Error(), FingerprintEnv) {
		t.Fatalf("no pin, no terminal: %v; want a refusal naming %s and how to accept it", err, tc.fp)
	}
	if _, err := os.Stat(tc.file); !os.IsNotExist(err) {
		t.Fatalf("a refusal wrote %s (%v)", tc.file, err)
	}

	env.TrustFingerprint = "SHA256:not-it"
	if err := tc.connect(t, env); err == nil || !strings.Contains(err.Error(), "not SHA256:not-it") {
		t.Fatalf("another fingerprint given: %v", err)
	}

	env, errb := trustEnv("", false)
	env.TrustFingerprint = tc.fp
	if err := tc.connect(t, env); err != nil {
		t.Fatalf("--trust-fingerprint: %v", err)
	}
	if !strings.Contains(errb.String(), "Trusted the certificate of "+tc.addr) {
		t.Errorf("stderr %q does not say it pinned", errb.String())
	}
	st, err := os.Stat(tc.file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("known_servers: %v %v, want mode 0600", st, err)
	}
	if b, _ := os.ReadFile(tc.file); !strings.Contains(string(b), tc.addr+" "+tc.fp+"\n") {
		t.Fatalf("known_servers:\n%s", b)
	}

	env, _ = trustEnv("", false)
	if err := tc.connect(t, env); err != nil {
		t.Fatalf("pinned: %v", err)
	}
}

func TestServerTrustEnvAndTerminal(t *testing.T) {
	t.Run("env", func(t *testing.T) {
		tc := newTrustCase(t)
		t.Setenv(FingerprintEnv, tc.fp)
		env, _ := trustEnv("", false)
		if err := tc.connect(t, env); err != nil {
			t.Fatalf("%s: %v", FingerprintEnv, err)
		}
	})
	t.Run("terminal yes", func(t *testing.T) {
		tc := newTrustCase(t)
		env, errb := trustEnv("yes\n", true)
		if err := tc.connect(t, env); err != nil {
			t.Fatalf("answered yes: %v", err)
		}
		if !strings.Contains(errb.String(), "can't be established") || !strings.Contains(errb.String(), tc.fp) {
			t.Errorf("the question %q does not show the fingerprint", errb.String())
		}
		if b, _ := os.ReadFile(tc.file); !strings.Contains(string(b), tc.fp) {
			t.Errorf("not pinned after yes: %q", b)
		}
	})
	t.Run("terminal no", func(t *testing.T) {
		tc := newTrustCase(t)
		env, _ := trustEnv("no\n", true)
		if err := tc.connect(t, env); err == nil || !strings.Contains(err.Error(), "not trusted") {
			t.Fatalf("answered no: %v", err)
		}
	})
}

// A pinned server presenting another certificate is refused with both fingerprints and the way
// to remove the old pin.
func TestServerTrustChanged(t *testing.T) {
	tc := newTrustCase(t)
	const old = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	if err := pinServer(tc.file, tc.addr, old); err != nil {
		t.Fatal(err)
	}
	env, _ := trustEnv("yes\n", true)
	env.TrustFingerprint = tc.fp
	err := tc.connect(t, env)
	for _, want := range []string{"HAS CHANGED", old, tc.fp, tc.file, "remove the line for " + tc.addr} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("changed certificate: %v; want %q in it", err, want)
		}
	}
}

func TestKnownServersBadLine(t *testing.T) {
	f := filepath.Join(t.TempDir(), "known_servers")
	if err := os.WriteFile(f, []byte("# pins\nhost:1 SHA256:x\nhost:2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readKnownServers(f); err == nil || !strings.Contains(err.Error(), f+":3") {
		t.Fatalf("readKnownServers = %v, want an error naming %s:3", err, f)
	}
}

// Plain HTTP needs no trust decision.
func TestServerTrustPlainHTTP(t *testing.T) {
	env, _ := trustEnv("", false)
	if _, err := env.serverTrust(context.Background(), "http://127.0.0.1:1"); err != nil {
		t.Fatalf("http: %v", err)
	}
}

func TestServerTLSFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "a.crt"}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-cert", "a.crt", "--tls-key", "a.key", "--tls-host", "x"}, "--tls-host"},
		{[]string{"--tls", "--insecure-no-tls"}, "contradicts"},
	} {
		code, _, stderr := execute(t, nil, append([]string{"server", "--home", t.TempDir()}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("server %v: exit %d %q, want usage error %q", tc.args, code, stderr, tc.want)
		}
	}
	var got ServeOptions
	serve := func(_ context.Context, o ServeOptions) error { got = o; return nil }
	code, _, stderr := execute(t, serve, "server", "--home", t.TempDir(), "--listen", "0.0.0.0:8700", "--tls", "--tls-host", "a.example", "--tls-host", "10.0.0.4")
	if code != ExitOK || !got.TLS.On || strings.Join(got.TLS.Hosts, ",") != "a.example,10.0.0.4" {
		t.Fatalf("exit %d %q, TLS options %+v", code, stderr, got.TLS)
	}
}

func TestServerHelpSuggestsNoCleartext(t *testing.T) {
	_, out, _ := execute(t, nil, "server", "--help")
	if !strings.Contains(out, "--insecure-no-tls") {
		t.Fatalf("server --help:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "0.0.0.0") && !strings.Contains(l, "--tls") {
			t.Errorf("server --help suggests a cleartext listen: %q", l)
		}
	}
}
