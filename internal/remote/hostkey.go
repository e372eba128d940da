package remote

import (
	"bytes"
	"errors"
	"fmt"
	"net"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyPolicy says how a host proves its identity. Set exactly one field.
type HostKeyPolicy struct {
	// KnownHosts is an OpenSSH known_hosts file listing the host's keys.
	KnownHosts string
	// Pinned is the host key recorded when the host was attached, in authorized_keys form
	// ("ssh-ed25519 AAAA..."), as returned by SSH.HostKey.
	Pinned string
	// TrustOnFirstUse accepts whatever key the host presents. Use it only when attaching a host,
	// and store SSH.HostKey (or Client.HostKey) as Pinned for every later connection; a Client
	// pins the first key by itself for its reconnects.
	TrustOnFirstUse bool
}

// Fingerprint returns the SHA-256 fingerprint of an authorized_keys-form key with its type,
// as ssh-keygen -l prints it: "SHA256:... (ssh-ed25519)".
func Fingerprint(authorizedKey string) (string, error) {
	k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(authorizedKey))
	if err != nil {
		return "", fmt.Errorf("parse host key: %w", err)
	}
	return describeKey(k), nil
}

func describeKey(k ssh.PublicKey) string {
	return ssh.FingerprintSHA256(k) + " (" + k.Type() + ")"
}

// hostKeyCheck builds the callback for a dial of addr, recording the presented key in *seen, and
// the host key algorithms to ask for: the host must present a key of a type we know for it, or a host
// with several keys may show another one and look changed.
func (p HostKeyPolicy) hostKeyCheck(addr string, seen *ssh.PublicKey) (ssh.HostKeyCallback, []string, error) {
	n := 0
	for _, set := range []bool{p.KnownHosts != "", p.Pinned != "", p.TrustOnFirstUse} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, nil, errors.New("host key policy: set exactly one of known_hosts file, pinned key, trust on first use")
	}
	switch {
	case p.TrustOnFirstUse:
		return func(_ string, _ net.Addr, k ssh.PublicKey) error { *seen = k; return nil }, nil, nil
	case p.Pinned != "":
		want, _, _, _, err := ssh.ParseAuthorizedKey([]byte(p.Pinned))
		if err != nil {
			return nil, nil, fmt.Errorf("pinned host key: %w", err)
		}
		cb := func(host string, _ net.Addr, k ssh.PublicKey) error {
			*seen = k
			if bytes.Equal(k.Marshal(), want.Marshal()) {
				return nil
			}
			return &HostKeyError{Host: host, Presented: describeKey(k), Expected: []string{describeKey(want)}, Source: "the pinned key"}
		}
		return cb, algorithmsFor(want.Type()), nil
	default:
		kh, err := knownhosts.New(p.KnownHosts)
		if err != nil {
			return nil, nil, fmt.Errorf("known_hosts: %w", err)
		}
		// Ask about a key no file lists: the KeyError names the keys known for addr.
		var algos []string
		var ke *knownhosts.KeyError
		if errors.As(kh(addr, &net.TCPAddr{IP: net.IPv4zero}, probeKey{}), &ke) {
			for _, w := range ke.Want {
				algos = append(algos, algorithmsFor(w.Key.Type())...)
			}
		}
		cb := func(host string, remote net.Addr, k ssh.PublicKey) error {
			*seen = k
			err := kh(host, remote, k)
			var ke *knownhosts.KeyError
			if errors.As(err, &ke) {
				he := &HostKeyError{Host: host, Presented: describeKey(k), Source: p.KnownHosts}
				for _, w := range ke.Want {
					he.Expected = append(he.Expected, describeKey(w.Key))
				}
				return he
			}
			return err
		}
		return cb, algos, nil
	}
}

// algorithmsFor maps a key type to the host key algorithms that present it.
func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// probeKey is a key no known_hosts file lists.
type probeKey struct{}

func (probeKey) Type() string                        { return "hangar-probe" }
func (probeKey) Marshal() []byte                     { return []byte("hangar-probe") }
func (probeKey) Verify([]byte, *ssh.Signature) error { return errors.New("probe key") }
