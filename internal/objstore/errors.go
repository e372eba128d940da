package objstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// Kind says what went wrong with an object store, for callers that act on it.
type Kind string

const (
	// KindAccessDenied: the credentials were refused, or do not allow the operation.
	KindAccessDenied Kind = "access denied"
	// KindNoContainer: the bucket, container or filesystem does not exist.
	KindNoContainer Kind = "no such bucket or container"
	// KindNotFound: nothing lies at the path.
	KindNotFound Kind = "not found"
	// KindNetwork: the store could not be reached, or the transfer broke off.
	KindNetwork Kind = "network"
	// KindInvalid: the location or credentials cannot be used as given.
	KindInvalid Kind = "invalid location"
	// KindLocal: the node's side failed (the disk, the destination).
	KindLocal Kind = "local"
	// KindOther: anything else the store answered.
	KindOther Kind = "store error"
)

// Error is every error objstore returns about a location. Its message names the datastore and
// path and what to check; it never holds a credential (the store's own message is redacted).
type Error struct {
	Op       string // open, list, download, upload
	Location datastore.Location
	Key      string // the object, when one
	Kind     Kind
	Err      error // redacted
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Op, e.Location.String())
	if e.Key != "" {
		fmt.Fprintf(&b, " object %s", e.Key)
	}
	fmt.Fprintf(&b, ": %s", e.Kind)
	if h := e.hint(); h != "" {
		fmt.Fprintf(&b, " (%s)", h)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) hint() string {
	switch e.Kind {
	case KindAccessDenied:
		return "check the datastore's credentials and that they may " + verb(e.Op) + " " + e.Location.Container
	case KindNoContainer:
		return "check the datastore's bucket or container name, and its account or endpoint"
	case KindNotFound:
		return "check the path: nothing lies there"
	case KindNetwork:
		return "check that this node reaches the store's endpoint"
	}
	return ""
}

func verb(op string) string {
	switch op {
	case "upload":
		return "write"
	case "open":
		return "use"
	}
	return "read"
}

// redacted is an error whose message had the secrets taken out; it keeps the chain for errors.As.
type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// Redact replaces every secret in s with "[REDACTED]".
func Redact(s string, secrets []string) string {
	for _, v := range secrets {
		if v == "" {
			continue
		}
		s = strings.ReplaceAll(s, v, "[REDACTED]")
	}
	return s
}

func (b *Bucket) newError(op, key string, kind Kind, err error) *Error {
	e := &Error{Op: op, Location: b.loc, Key: key, Kind: kind}
	if err != nil {
		e.Err = &redacted{msg: Redact(describe(err), b.secrets), err: err}
	}
	return e
}

// classify turns an error of the store into an *Error of the right Kind.
func (b *Bucket) classify(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var oe *Error
	if errors.As(err, &oe) {
		return err
	}
	return b.newError(op, key, b.kindOf(err), err)
}

func (b *Bucket) kindOf(err error) Kind {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return KindOther
	}
	if k := b.driverKind(err); k != "" {
		return k
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return KindNetwork
	}
	if isConnErr(err) {
		return KindNetwork
	}
	return KindOther
}

func isConnErr(err error) bool {
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "unexpected EOF", "no such host", "i/o timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
