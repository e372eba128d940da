package workspace

import (
	"errors"
	"fmt"

	"github.com/hangar-ml/hangar/internal/store"
)

// Kind classifies an error for the API layer (the server maps it to a status code); the
// controller's errors are of these kinds too.
type Kind int

// Error kinds.
const (
	Invalid Kind = iota + 1
	NotFound
	Conflict
	Unauthorized
)

// Error is a user-facing error of a known kind.
type Error struct {
	Kind Kind
	Msg  string
	// Err is what it stands for, when a caller tells those of one kind apart (store.ErrExists
	// among Conflicts: MLflow answers a taken name 400, a refused change 409).
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap is Err, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

// Invalidf, NotFoundf and Conflictf make an Error of their kind; the controller's are these.
func Invalidf(format string, a ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, a...)}
}

func NotFoundf(format string, a ...any) error {
	return &Error{Kind: NotFound, Msg: fmt.Sprintf(format, a...)}
}

func Conflictf(format string, a ...any) error {
	return &Error{Kind: Conflict, Msg: fmt.Sprintf(format, a...)}
}

// mapStoreErr types a store's not-found as NotFound.
func mapStoreErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &Error{Kind: NotFound, Msg: err.Error()}
	}
	return err
}
