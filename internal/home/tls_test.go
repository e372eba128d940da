package home

import (
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecideTLS(t *testing.T) {
	for _, tc := range []struct {
		name    string
		host    string
		c       TLSChoice
		want    bool
		wantErr string
	}{
		{"loopback stays plain", "127.0.0.1", TLSChoice{}, false, ""},
		{"localhost stays plain", "localhost", TLSChoice{}, false, ""},
		{"ipv6 loopback stays plain", "::1", TLSChoice{}, false, ""},
		{"--tls on loopback", "127.0.0.1", TLSChoice{TLS: true}, true, ""},
		{"a restart keeps https", "127.0.0.1", TLSChoice{WasTLS: true}, true, ""},
		{"a restart keeps https anywhere", "0.0.0.0", TLSChoice{WasTLS: true}, true, ""},
		{"every interface refused", "0.0.0.0", TLSChoice{}, false, "non-loopback address (0.0.0.0)"},
		{"empty host is every interface", "", TLSChoice{}, false, "every interface"},
		{"a LAN address refused", "10.0.0.4", TLSChoice{}, false, "--insecure-no-tls"},
		{"a name refused", "hangar.example.com", TLSChoice{}, false, "--tls"},
		{"forced", "0.0.0.0", TLSChoice{Insecure: true}, false, ""},
		{"generated", "0.0.0.0", TLSChoice{TLS: true}, true, ""},
		{"given", "10.0.0.4", TLSChoice{Given: true}, true, ""},
		{"contradiction", "0.0.0.0", TLSChoice{Insecure: true, TLS: true}, false, "contradicts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecideTLS(tc.host, tc.c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("DecideTLS = %v, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DecideTLS = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := DecideTLS("0.0.0.0", TLSChoice{}); !errors.Is(err, ErrCleartext) {
		t.Errorf("refusal %v is not ErrCleartext", err)
	}
}

func TestCertNames(t *testing.T) {
	addrs := []net.IP{net.ParseIP("10.0.0.4"), net.ParseIP("127.0.0.1"), net.ParseIP("fe80::1")}
	for _, tc := range []struct {
		name, host string
		extra      []string
		want       []string
	}{
		{"loopback", "127.0.0.1", nil, []string{"127.0.0.1", "::1", "localhost"}},
		{"one address", "10.0.0.9", []string{"hangar.example.com"}, []string{"10.0.0.9", "127.0.0.1", "::1", "hangar.example.com", "localhost"}},
		{"every interface", "0.0.0.0", nil, []string{"10.0.0.4", "127.0.0.1", "::1", "fe80::1", "localhost", "node1"}},
		{"every interface, ipv6", "::", []string{" "}, []string{"10.0.0.4", "127.0.0.1", "::1", "fe80::1", "localhost", "node1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, CertNames(tc.host, tc.extra, addrs, "node1")); d != "" {
				t.Errorf("CertNames (-want +got):\n%s", d)
			}
		})
	}
}

// The generated certificate is made once, its key kept 0600, and reused across restarts (same
// fingerprint: supervisors of live runs and pinned CLIs still verify the server); a name it
// lacks makes a new one that keeps the old names.
func TestGeneratedCertificate(t *testing.T) {
	h := newHome(t)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	first, err := h.GeneratedCertificate([]string{"127.0.0.1", "localhost"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Made || len(first.Replaced) > 0 {
		t.Fatalf("first: made %v replaced %v", first.Made, first.Replaced)
	}
	st, err := os.Stat(filepath.Join(h.TLSDir(), "server.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("server.key: %v %v, want mode 0600", st, err)
	}
	leaf, _ := x509.ParseCertificate(first.TLS.Certificate[0])
	if leaf.PublicKeyAlgorithm != x509.ECDSA || leaf.VerifyHostname("127.0.0.1") != nil || leaf.VerifyHostname("localhost") != nil {
		t.Fatalf("certificate: %v, names %v %v", leaf.PublicKeyAlgorithm, leaf.DNSNames, leaf.IPAddresses)
	}

	again, err := h.GeneratedCertificate([]string{"localhost"}, now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if again.Made || again.Fingerprint != first.Fingerprint || string(again.PEM) != string(first.PEM) {
		t.Fatalf("restart: made %v, fingerprint %s, want the same certificate %s", again.Made, again.Fingerprint, first.Fingerprint)
	}

	wider, err := h.GeneratedCertificate([]string{"127.0.0.1", "hangar.example.com"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !wider.Made || wider.Fingerprint == first.Fingerprint || cmp.Diff([]string{"hangar.example.com"}, wider.Replaced) != "" {
		t.Fatalf("new name: made %v replaced %v", wider.Made, wider.Replaced)
	}
	leaf, _ = x509.ParseCertificate(wider.TLS.Certificate[0])
	for _, n := range []string{"127.0.0.1", "localhost", "hangar.example.com"} {
		if leaf.VerifyHostname(n) != nil {
			t.Errorf("the new certificate does not name %s", n)
		}
	}
}

func TestLoadCertificateNamesFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "server.crt")
	if err := os.WriteFile(bad, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadCertificate(bad, filepath.Join(dir, "server.key"))
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "--tls-cert") {
		t.Fatalf("LoadCertificate(junk) = %v, want an error naming --tls-cert %s", err, bad)
	}
}

// On PostgreSQL the workspace directory, and its certificate, may be shared by several servers:
// a server whose name the certificate lacks is refused, saying what to do, and the certificate
// the others serve is left as it is.
func TestSharedCertificateIsNotReplaced(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	first := Home{Dir: dir, Database: "postgres://hangar@db/hangar"}
	made, err := first.GeneratedCertificate([]string{"localhost", "node1.example"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := first.GeneratedCertificate([]string{"node1.example"}, now); err != nil || again.Fingerprint != made.Fingerprint {
		t.Fatalf("a name it has: %v, same=%v", err, again.Fingerprint == made.Fingerprint)
	}
	_, err = first.GeneratedCertificate([]string{"node2.example"}, now)
	if err == nil || !strings.Contains(err.Error(), "node2.example") || !strings.Contains(err.Error(), "--advertise-url") {
		t.Fatalf("a server the certificate does not name: %v", err)
	}
	if kept, err := LoadCertificate(filepath.Join(dir, "tls", "server.crt"), filepath.Join(dir, "tls", "server.key")); err != nil || kept.Fingerprint != made.Fingerprint {
		t.Fatalf("the shared certificate was replaced: %v", err)
	}
	// A workspace on SQLite has one server: it makes a new certificate naming the new name.
	if renewed, err := (Home{Dir: dir}).GeneratedCertificate([]string{"node2.example"}, now); err != nil || len(renewed.Replaced) == 0 {
		t.Fatalf("on SQLite: %v, replaced %v", err, renewed.Replaced)
	}
}
