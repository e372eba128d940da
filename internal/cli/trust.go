package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// Trust on first use, as ssh does with host keys (issue 18). A workspace served over HTTPS with a
// certificate this machine's roots do not vouch for (the server's generated one) is trusted by
// its SHA-256 fingerprint, remembered per host:port in known_servers. The first connection asks
// on a terminal; without one it refuses, saying how to accept (--trust-fingerprint or
// HANGAR_TLS_FINGERPRINT), and never accepts silently. A pinned server that presents another
// certificate is refused, with both fingerprints.

// FingerprintEnv accepts a server's certificate by its fingerprint, as --trust-fingerprint does.
const FingerprintEnv = "HANGAR_TLS_FINGERPRINT"

// KnownServersFile is where pins are kept: $XDG_CONFIG_HOME/hangar/known_servers (or the
// platform's user config directory).
func KnownServersFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user config directory for known_servers: %w", err)
	}
	return filepath.Join(dir, "hangar", "known_servers"), nil
}

// trustAction is what the CLI does about a server's certificate.
type trustAction int

const (
	trustAccept   trustAction = iota // pinned already
	trustPin                         // accepted by the fingerprint given: pin it
	trustAsk                         // ask on the terminal
	trustUnknown                     // refuse: not pinned, nobody to ask
	trustChanged                     // refuse: another certificate is pinned
	trustMismatch                    // refuse: the fingerprint given is not the server's
)

// decideTrust is the pure rule: pinned is the known fingerprint ("" for none), seen the
// server's, offered the one the user gave ("" for none).
func decideTrust(pinned, seen, offered string, terminal bool) trustAction {
	switch {
	case pinned == seen:
		return trustAccept
	case pinned != "":
		return trustChanged
	case offered == seen:
		return trustPin
	case offered != "":
		return trustMismatch
	case terminal:
		return trustAsk
	}
	return trustUnknown
}

// serverTrust returns how the client verifies the workspace at rawURL: as usual for plain HTTP
// and for a certificate the system's roots trust; otherwise by its pinned fingerprint.
func (e *Env) serverTrust(ctx context.Context, rawURL string) (api.Option, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" {
		return func(*api.Client) {}, nil
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	chain, err := peerChain(ctx, addr, u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	if systemTrusts(chain, u.Hostname()) {
		return func(*api.Client) {}, nil
	}
	seen := api.Fingerprint(chain[0])
	file, err := KnownServersFile()
	if err != nil {
		return nil, err
	}
	pins, err := readKnownServers(file)
	if err != nil {
		return nil, err
	}
	offered := e.TrustFingerprint
	if offered == "" {
		offered = os.Getenv(FingerprintEnv)
	}
	switch decideTrust(pins[addr], seen, strings.TrimSpace(offered), e.stdinTerminal()) {
	case trustAccept:
	case trustPin:
		if err := pinServer(file, addr, seen); err != nil {
			return nil, err
		}
		fmt.Fprintf(e.Stderr, "Trusted the certificate of %s (%s), remembered in %s\n", addr, seen, file)
	case trustAsk:
		if err := e.askTrust(file, addr, seen); err != nil {
			return nil, err
		}
	case trustChanged:
		return nil, fmt.Errorf("THE CERTIFICATE OF WORKSPACE SERVER %s HAS CHANGED: pinned %s, the server now presents %s. "+
			"Someone may be intercepting the connection, or the server's certificate was replaced. If you know it was "+
			"replaced, remove the line for %s from %s and connect again", addr, pins[addr], seen, addr, file)
	case trustMismatch:
		return nil, fmt.Errorf("the certificate of workspace server %s has fingerprint %s, not %s as given; refusing to connect",
			addr, seen, offered)
	default:
		return nil, fmt.Errorf("the certificate of workspace server %s is not trusted by this machine and not pinned; "+
			"its fingerprint is %s. Check it with the server's operator (the server logs it at start), then accept it "+
			"with --trust-fingerprint %s or %s=%s", addr, seen, seen, FingerprintEnv, seen)
	}
	return api.WithTLS(api.PinnedTLSConfig(seen)), nil
}

// askTrust asks on the terminal, as ssh does, and pins the certificate when the answer is yes.
func (e *Env) askTrust(file, addr, seen string) error {
	fmt.Fprintf(e.Stderr, "The authenticity of workspace server %s can't be established.\n"+
		"Its certificate's fingerprint is %s.\nTrust it and remember it in %s (yes/no)? ", addr, seen, file)
	line, _ := bufio.NewReader(e.stdin()).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "yes" && a != "y" {
		return fmt.Errorf("the certificate of %s (%s) was not trusted", addr, seen)
	}
	return pinServer(file, addr, seen)
}

// peerChain is the certificates a server presents, read without verifying them (that is the
// caller's decision).
func peerChain(ctx context.Context, addr, serverName string) ([]*x509.Certificate, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{ServerName: serverName, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	chain := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(chain) == 0 {
		return nil, errors.New("the server presented no certificate")
	}
	return chain, nil
}

// systemTrusts reports whether this machine's roots vouch for chain as host.
func systemTrusts(chain []*x509.Certificate, host string) bool {
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{DNSName: host, Intermediates: inter})
	return err == nil
}

// readKnownServers reads the pins: "host:port SHA256:..." lines ("#" starts a comment). A
// missing file is no pins.
func readKnownServers(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	pins := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[1], "SHA256:") {
			return nil, fmt.Errorf("%s:%d: want \"host:port SHA256:<fingerprint>\", got %q", file, i+1, line)
		}
		pins[f[0]] = f[1]
	}
	return pins, nil
}

// pinServer remembers addr's fingerprint (0600: which servers a user trusts is theirs alone).
func pinServer(file, addr, fingerprint string) error {
	pins, err := readKnownServers(file)
	if err != nil {
		return err
	}
	pins[addr] = fingerprint
	var b strings.Builder
	b.WriteString("# Workspace servers whose certificates hangar trusts: host:port SHA256:fingerprint. Remove a line to forget one.\n")
	for _, k := range slices.Sorted(maps.Keys(pins)) {
		fmt.Fprintf(&b, "%s %s\n", k, pins[k])
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("pin %s: %w", addr, err)
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("pin %s: %w", addr, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("pin %s: %w", addr, err)
	}
	return nil
}
