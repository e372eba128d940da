package home

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// The workspace server's TLS (issue 18). A server that listens beyond this machine serves HTTPS,
// with a certificate given by the operator or one generated here and kept in the workspace (as
// sshd keeps its host keys): reused across restarts, so that supervisors of live runs, which
// trust exactly that certificate, still verify the restarted server, and pinned CLIs still
// recognise it.

// TLSDir holds the generated certificate (server.crt) and its key (server.key, 0600).
func (h Home) TLSDir() string { return filepath.Join(h.Dir, "tls") }

// ErrCleartext refuses plain HTTP on an address other machines can reach.
var ErrCleartext = errors.New("refusing to serve plain HTTP on a non-loopback address")

// TLSChoice is what `hangar server` was asked for.
type TLSChoice struct {
	TLS      bool // --tls
	Given    bool // --tls-cert and --tls-key
	Insecure bool // --insecure-no-tls
	// WasTLS: the server reuses the address its previous start served HTTPS on.
	WasTLS bool
}

// DecideTLS says whether a server listening on host serves HTTPS. Loopback may stay plain HTTP
// (the local quick start); any other address needs TLS, or --insecure-no-tls said out loud.
func DecideTLS(host string, c TLSChoice) (bool, error) {
	switch {
	case c.Insecure && (c.TLS || c.Given):
		return false, errors.New("--insecure-no-tls contradicts --tls, --tls-cert and --tls-key")
	case c.TLS || c.Given:
		return true, nil
	case c.Insecure:
		return false, nil
	case c.WasTLS || IsLoopback(host):
		return c.WasTLS, nil
	}
	return false, fmt.Errorf("%w (%s): the workspace token and run tokens would cross the network "+
		"in clear; add --tls (a certificate is generated and kept in the workspace; --tls-host adds names to it) or "+
		"--tls-cert FILE --tls-key FILE, or --insecure-no-tls to serve plain HTTP anyway", ErrCleartext, displayHost(host))
}

func displayHost(host string) string {
	if host == "" {
		return "every interface"
	}
	return host
}

// IsLoopback reports whether host (a name or an IP, "" for every interface) is this machine only.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CertNames are the names a generated certificate covers for a server listening on host: this
// machine's loopback names, the host itself or, for every interface, the machine's addresses and
// hostname, and the operator's extra names (--tls-host). Sorted, without repeats.
func CertNames(host string, extra []string, addrs []net.IP, hostname string) []string {
	names := []string{"localhost", "127.0.0.1", "::1"}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		for _, a := range addrs {
			names = append(names, a.String())
		}
		if hostname != "" {
			names = append(names, hostname)
		}
	} else {
		names = append(names, host)
	}
	for _, e := range extra {
		if e = strings.TrimSpace(e); e != "" {
			names = append(names, e)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// certMissing lists the names of want that cert does not cover.
func certMissing(cert *x509.Certificate, want []string) []string {
	var missing []string
	for _, n := range want {
		if cert.VerifyHostname(n) != nil {
			missing = append(missing, n)
		}
	}
	return missing
}

// ServerCert is the certificate a server serves.
type ServerCert struct {
	TLS tls.Certificate
	// PEM is the certificate file's content: what supervisors and local CLIs trust.
	PEM         []byte
	Fingerprint string
	// Made: generated now; Replaced lists the names an older generated one lacked (its
	// fingerprint changed: pinned CLIs refuse it until their pin is renewed).
	Made     bool
	Replaced []string
}

// LoadCertificate reads an operator's certificate and key (--tls-cert, --tls-key).
func LoadCertificate(certFile, keyFile string) (ServerCert, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return ServerCert{}, fmt.Errorf("load --tls-cert %s / --tls-key %s: %w", certFile, keyFile, err)
	}
	b, err := os.ReadFile(certFile)
	if err != nil {
		return ServerCert{}, err
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return ServerCert{}, fmt.Errorf("--tls-cert %s: %w", certFile, err)
	}
	return ServerCert{TLS: c, PEM: b, Fingerprint: api.Fingerprint(leaf)}, nil
}

// GeneratedCertificate returns the workspace's generated certificate, made on first use, and
// made again only when it does not cover every one of names (a new listen address or --tls-host).
func (h Home) GeneratedCertificate(names []string, now time.Time) (ServerCert, error) {
	certFile, keyFile := filepath.Join(h.TLSDir(), "server.crt"), filepath.Join(h.TLSDir(), "server.key")
	var replaced []string
	if sc, err := LoadCertificate(certFile, keyFile); err == nil {
		leaf, _ := x509.ParseCertificate(sc.TLS.Certificate[0])
		if replaced = certMissing(leaf, names); len(replaced) == 0 && now.Before(leaf.NotAfter) {
			return sc, nil
		}
		if h.Database != "" && len(replaced) > 0 {
			// On PostgreSQL the directory, and so the certificate, may be shared by several
			// servers (design 0020): a new one would cut off the others and every node that trusts it.
			return ServerCert{}, fmt.Errorf("the workspace's certificate (%s) does not name %s, and the workspace's other servers "+
				"and its nodes trust it as it is: give this server an --advertise-url the certificate names, or make a new one "+
				"naming every server (stop them all, remove %s, start one with --tls-host for each), or give every server the "+
				"same --tls-cert", certFile, strings.Join(replaced, ", "), h.TLSDir())
		}
		old := append([]string(nil), leaf.DNSNames...)
		for _, ip := range leaf.IPAddresses {
			old = append(old, ip.String())
		}
		names = slices.Compact(slices.Sorted(slices.Values(append(names, old...))))
		if len(replaced) == 0 {
			replaced = []string{"(expired)"}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return ServerCert{}, fmt.Errorf("the workspace's certificate: %w", err)
	}
	certPEM, keyPEM, err := newCertificate(names, now)
	if err != nil {
		return ServerCert{}, err
	}
	if err := os.MkdirAll(h.TLSDir(), 0o700); err != nil {
		return ServerCert{}, err
	}
	if err := writeAtomic(keyFile, keyPEM, 0o600); err != nil {
		return ServerCert{}, err
	}
	if err := writeAtomic(certFile, certPEM, 0o644); err != nil {
		return ServerCert{}, err
	}
	sc, err := LoadCertificate(certFile, keyFile)
	sc.Made, sc.Replaced = true, replaced
	return sc, err
}

// newCertificate makes a self-signed ECDSA P-256 certificate for names, valid ten years (a
// host key's life: it is trusted by pinning, not by expiry).
func newCertificate(names []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "hangar workspace server", Organization: []string{"Hangar"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own CA, so that OpenSSL-based clients (MLflow's) accept it as their CA file
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("make the server's certificate: %w", err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}
