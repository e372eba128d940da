package remote

import (
	"errors"
	"fmt"
	"strings"
)

// Connection failures, told apart with errors.Is. Every error from Dial and Connect is one line that
// names the host and says which of these happened.
var (
	// ErrUnreachable: no TCP connection (refused, no route, unknown host name).
	ErrUnreachable error = &connectivityError{"host unreachable"}
	// ErrTimeout: the TCP connect or the SSH handshake took longer than Config.Timeout.
	ErrTimeout error = &connectivityError{"connect timed out"}
	// ErrAuth: the host refused the key or the password.
	ErrAuth = errors.New("authentication failed")
	// ErrHostKeyUnknown: the known_hosts file has no key for the host.
	ErrHostKeyUnknown = errors.New("host key unknown")
	// ErrHostKeyChanged: the host presented a key other than the one known or pinned.
	ErrHostKeyChanged = errors.New("host key changed")
	// ErrHandshake: something answered but the SSH handshake failed otherwise (not an SSH server,
	// no algorithm in common, too many authentication attempts).
	ErrHandshake = errors.New("SSH handshake failed")
	// ErrDisconnected: a Client is not connected and the context ended while it waited.
	ErrDisconnected error = &connectivityError{"not connected"}
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("client closed")
	// ErrUnsupported: the host lacks something Hangar needs (bash).
	ErrUnsupported = errors.New("host not supported")
	// ErrProcessGone: the process is not running (any more), or its pid now belongs to another one.
	ErrProcessGone = errors.New("process not running")
)

// connectivityError is a connection failure that may heal by itself (the host is down, slow or
// cut off). It says so with Temporary, like a net.Error, so that callers which classify errors
// without importing this package (the controller's backoff of a target) can tell it from a
// refusal (authentication, host key).
type connectivityError struct{ msg string }

func (e *connectivityError) Error() string   { return e.msg }
func (e *connectivityError) Temporary() bool { return true }

// HostKeyError is a host key that does not match what was expected; it is ErrHostKeyChanged, or
// ErrHostKeyUnknown when nothing was known for the host.
type HostKeyError struct {
	Host      string   // host:port as dialled
	Presented string   // fingerprint and type of the key the host showed ("SHA256:... (ssh-ed25519)")
	Expected  []string // fingerprints and types of the known or pinned keys
	Source    string   // where the expected keys came from: the known_hosts path or "the pinned key"
}

func (e *HostKeyError) Error() string { return e.message(e.Host + " ") }

// message is the error, naming the host with prefix ("" where the context already names it).
func (e *HostKeyError) message(host string) string {
	if len(e.Expected) == 0 {
		return fmt.Sprintf("host key unknown: %spresented %s, which %s does not list (add it, or attach with the key pinned)",
			host, e.Presented, e.Source)
	}
	return fmt.Sprintf("host key changed: %spresented %s, expected %s from %s; if the host was reinstalled, re-attach it",
		host, e.Presented, strings.Join(e.Expected, " or "), e.Source)
}

func (e *HostKeyError) Is(target error) bool {
	if len(e.Expected) == 0 {
		return target == ErrHostKeyUnknown
	}
	return target == ErrHostKeyChanged
}

// connectError is one line: "ssh user@host:port: <what> (<detail>)", which is kind.
type connectError struct {
	target string
	kind   error
	msg    string
	err    error
}

func (e *connectError) Error() string {
	s := "ssh " + e.target + ": " + e.msg
	if e.err != nil {
		s += ": " + oneLine(e.err.Error())
	}
	return s
}

func (e *connectError) Unwrap() []error {
	if e.err == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.err}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
