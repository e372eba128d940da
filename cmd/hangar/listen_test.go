package main

import (
	"crypto/tls"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/home"
)

// A given certificate (--tls-cert, --tls-key) is what the server serves, and what it hands to
// supervisors; the workspace's generated one is left alone.
func TestListenGivenCertificate(t *testing.T) {
	other := home.Home{Dir: t.TempDir()}
	given, err := other.GeneratedCertificate([]string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := home.Home{Dir: t.TempDir()}
	o := cli.ServeOptions{Listen: "127.0.0.1:0", TLS: cli.TLSOptions{
		CertFile: filepath.Join(other.TLSDir(), "server.crt"), KeyFile: filepath.Join(other.TLSDir(), "server.key")}}
	l, err := listen(h, o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.ln.Close()
	if !strings.HasPrefix(l.url, "https://127.0.0.1:") || l.cert == nil || string(l.cert.PEM) != string(given.PEM) {
		t.Fatalf("listening at %s with %v", l.url, l.cert)
	}
	go func() {
		if c, err := l.ln.Accept(); err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	conn, err := tls.Dial("tcp", l.ln.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := api.Fingerprint(conn.ConnectionState().PeerCertificates[0]); got != given.Fingerprint {
		t.Errorf("served %s, want the given %s", got, given.Fingerprint)
	}
	if _, err := os.Stat(h.TLSDir()); !os.IsNotExist(err) {
		t.Errorf("a certificate was generated beside the given one (%v)", err)
	}
}

// Every interface is reached on loopback: "[::]" names no host a certificate can be checked for.
func TestListenEveryInterfaceURL(t *testing.T) {
	h := home.Home{Dir: t.TempDir()}
	l, err := listen(h, cli.ServeOptions{Listen: "0.0.0.0:0", TLS: cli.TLSOptions{On: true}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.ln.Close()
	if !strings.HasPrefix(l.url, "https://127.0.0.1:") {
		t.Fatalf("url %s", l.url)
	}
}
