package blob

import (
	"errors"
	"syscall"
)

// NoSpaceError is a write to the store that failed because its file system is full (ENOSPC) or
// its owner's quota is spent (EDQUOT). It names the store's directory, so that whoever reads it
// knows which disk to free; the server answers it with 507 Insufficient Storage.
type NoSpaceError struct {
	Dir string // the store's directory
	Err error  // the file system's error, with the file it was writing
}

func (e *NoSpaceError) Error() string { return "no space left on device: writing blob to " + e.Dir }

func (e *NoSpaceError) Unwrap() error { return e.Err }

// IsNoSpace reports whether err says the disk is full or the quota spent.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// noSpace types err as a NoSpaceError when it is one, so callers can tell a full disk from a
// broken one without matching strings.
func (s *Store) noSpace(err error) error {
	var ns *NoSpaceError
	if err == nil || errors.As(err, &ns) || !IsNoSpace(err) {
		return err
	}
	return &NoSpaceError{Dir: s.dir, Err: err}
}
