package api_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// tlsServer is an https server answering the health route, and the PEM of its certificate.
func tlsServer(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// otherCert is the PEM of another self-signed certificate for 127.0.0.1 (httptest's servers all
// share one).
func otherCert(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// A client trusts exactly the certificate it is given: the server's own works, another
// server's (a wrong CA) fails the handshake, as does having none (the system's roots).
func TestClientVerifiesServerCA(t *testing.T) {
	srv, ca := tlsServer(t)
	other := otherCert(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		ca      []byte
		wantErr string
	}{
		{"its own certificate", ca, ""},
		{"another server's certificate", other, "certificate"},
		{"no certificate: the system's roots", nil, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verify, err := api.WithCA(tc.ca, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = api.NewClient(srv.URL, "tok", verify).Health(ctx)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("health: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("health = %v, want an error about the %s", err, tc.wantErr)
			}
		})
	}
}

func TestWithCARefusesNoPEM(t *testing.T) {
	if _, err := api.WithCA([]byte("not a certificate"), ""); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("WithCA(garbage) = %v", err)
	}
}

// A supervisor through an SSH tunnel reaches the server on another address than its name: the
// server name it verifies is the server's own.
func TestTLSConfigServerName(t *testing.T) {
	srv, ca := tlsServer(t)
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) // httptest's certificate names 127.0.0.1 and example.com
	for _, tc := range []struct {
		name, serverName string
		ok               bool
	}{
		{"the certificate's name", "example.com", true},
		{"a name it lacks", "hangar.invalid", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verify, err := api.WithCA(ca, tc.serverName)
			if err != nil {
				t.Fatal(err)
			}
			_, err = api.NewClient(url, "", verify).Health(context.Background())
			if (err == nil) != tc.ok {
				t.Fatalf("health = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// A pinned client accepts the pinned certificate only, and says both fingerprints otherwise.
func TestPinnedTLSConfig(t *testing.T) {
	srv, _ := tlsServer(t)
	fp := api.Fingerprint(srv.Certificate())
	if !strings.HasPrefix(fp, "SHA256:") || len(fp) != len("SHA256:")+43 {
		t.Fatalf("fingerprint %q: want SHA256: and 43 base64 characters, as ssh prints", fp)
	}
	if _, err := api.NewClient(srv.URL, "", api.WithTLS(api.PinnedTLSConfig(fp))).Health(context.Background()); err != nil {
		t.Fatalf("pinned health: %v", err)
	}
	const old = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	_, err := api.NewClient(srv.URL, "", api.WithTLS(api.PinnedTLSConfig(old))).Health(context.Background())
	var changed *api.CertChangedError
	if !errors.As(err, &changed) || changed.Pinned != old || changed.Seen != fp {
		t.Fatalf("health with another pin = %v, want CertChangedError{%s, %s}", err, old, fp)
	}
}
