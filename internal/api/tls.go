package api

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
)

// Option configures a Client.
type Option func(*Client)

// WithTLS makes the client verify the server with cfg (nil: the system's roots).
func WithTLS(cfg *tls.Config) Option {
	return func(c *Client) {
		if cfg == nil {
			return
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = cfg
		c.hc = &http.Client{Transport: t}
	}
}

// HTTPClient is the client's HTTP client, for a request to the server outside the API (an
// endpoint's scoring URI): it verifies the server as the API calls do.
func (c *Client) HTTPClient() *http.Client { return c.hc }

// TLSConfig is how every supervisor and agent verifies the workspace server: it trusts exactly
// the certificates in caPEM (the certificate the server serves, or its CA) and nothing else, not
// even the system's roots, so a run token goes only to the server that started the run.
// serverName, when set, is the name to verify instead of the URL's host (a supervisor that
// reaches the server through an SSH tunnel on 127.0.0.1 verifies the server's own name).
func TLSConfig(caPEM []byte, serverName string) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("server certificate: no PEM certificate found")
	}
	return &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}, nil
}

// WithCA is WithTLS(TLSConfig(caPEM, serverName)); an empty caPEM leaves the client as it is (a
// plain-HTTP server, or one whose certificate the system trusts).
func WithCA(caPEM []byte, serverName string) (Option, error) {
	if len(caPEM) == 0 {
		return func(*Client) {}, nil
	}
	cfg, err := TLSConfig(caPEM, serverName)
	if err != nil {
		return nil, err
	}
	return WithTLS(cfg), nil
}

// PinnedTLSConfig trusts exactly one certificate, known by its fingerprint (a CLI's pin): the
// chain is not checked against any root, as ssh checks a host key.
func PinnedTLSConfig(fingerprint string) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // replaced by VerifyConnection: the leaf must be the pinned one
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("server sent no certificate")
			}
			if got := Fingerprint(cs.PeerCertificates[0]); got != fingerprint {
				return &CertChangedError{Pinned: fingerprint, Seen: got}
			}
			return nil
		},
	}
}

// CertChangedError is a server whose certificate is not the one pinned.
type CertChangedError struct {
	Pinned, Seen string
}

func (e *CertChangedError) Error() string {
	return fmt.Sprintf("the server's certificate changed: pinned %s, now %s", e.Pinned, e.Seen)
}

// Fingerprint names a certificate as ssh names a host key: "SHA256:" and the unpadded base64
// of the SHA-256 of its DER encoding.
func Fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// WithKeepAlive(false) makes the client open a new connection (and TLS handshake) per request,
// as a CLI command does: the benchmarks' figure for one command's cost.
func WithKeepAlive(on bool) Option {
	return func(c *Client) {
		t, ok := c.hc.Transport.(*http.Transport)
		if !ok || t == nil {
			t = http.DefaultTransport.(*http.Transport).Clone()
		} else {
			t = t.Clone()
		}
		t.DisableKeepAlives = !on
		c.hc = &http.Client{Transport: t}
	}
}
