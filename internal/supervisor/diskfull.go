package supervisor

import (
	"errors"
	"fmt"

	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
)

// diskFullError is a file the supervisor could not write because the node's disk is full (or
// the user's quota spent).
type diskFullError struct {
	path string
	err  error
}

func (e *diskFullError) Error() string { return "no space left on device: " + e.path }

func (e *diskFullError) Unwrap() error { return e.err }

// fileWriteError types a failed write of the file at path.
func fileWriteError(path string, err error) error {
	if blob.IsNoSpace(err) {
		return &diskFullError{path: path, err: err}
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// logLost reports a run log that could not be written whole (and warns how much was lost).
func (s *Supervisor) logLost(p *pipeline) error {
	n, err := p.capt.lost()
	if err == nil {
		return nil
	}
	s.noteDiskFull(err)
	if n > 0 {
		s.warn(fmt.Sprintf("%v: the last %d lines of output were lost", err, n))
	} else {
		s.warn(fmt.Sprintf("%v: a rank's log is incomplete", err))
	}
	return err
}

// noteDiskFull remembers the first error that says the node's disk is full, for failIfDiskFull.
func (s *Supervisor) noteDiskFull(err error) {
	var df *diskFullError
	var ns *blob.NoSpaceError
	switch {
	case s.diskFull != nil:
	case errors.As(err, &df):
		s.diskFull = df
	case errors.As(err, &ns):
		s.diskFull = ns
	}
}

// failIfDiskFull makes a run whose log or outputs could not be written for lack of disk space
// fail with that reason, saying where: not complete with its log cut short or its outputs
// missing, nor fail as if only its command had (a full disk usually makes the command fail
// too, and its last words are what the full disk lost). A canceled run stays canceled.
func (s *Supervisor) failIfDiskFull(res job.Result) job.Result {
	if s.diskFull == nil || res.State == job.Canceled {
		return res
	}
	res.State, res.Reason = job.Failed, s.diskFull.Error()
	return res
}
