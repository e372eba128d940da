package supervisor

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
)

// A log that the disk refuses (/dev/full answers every write with ENOSPC) is no longer lost in
// silence: the capture remembers the failed write, naming the file, and counts the lines lost;
// a rank's log tells the run's log, which finalize reads.
func TestCaptureOnFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	run, _, _ := newTestCapture(t)
	rank, err := newCapture("/dev/full", nil)
	if err != nil {
		t.Fatal(err)
	}
	rank.mirror, rank.prefix = run, "[rank 1] "
	rank.Write([]byte("one\ntwo\nthree\n"))
	for _, c := range []*capture{rank, run} {
		_, err := c.lost()
		var df *diskFullError
		if !errors.As(err, &df) || err.Error() != "no space left on device: /dev/full" || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("lost() error = %v, want the full disk of /dev/full", err)
		}
	}
	if n, _ := rank.lost(); n != 3 {
		t.Errorf("rank lost %d lines, want 3", n)
	}
	if n, _ := run.lost(); n != 0 {
		t.Errorf("the run's own log lost %d lines, want 0 (it was writable)", n)
	}
}

func TestFailIfDiskFull(t *testing.T) {
	full := &diskFullError{path: "/r/user_logs/std_log.txt", err: syscall.ENOSPC}
	cache := &blob.NoSpaceError{Dir: "/n/cache/blobs", Err: syscall.ENOSPC}
	code := 1
	tests := []struct {
		name     string
		noted    []error
		in, want job.Result
	}{
		{"completed, log cut", []error{full}, job.Result{State: job.Completed},
			job.Result{State: job.Failed, Reason: "no space left on device: /r/user_logs/std_log.txt"}},
		{"command failed too: the disk is why", []error{full}, job.Result{State: job.Failed, ExitCode: &code, Reason: "the command exited with code 1"},
			job.Result{State: job.Failed, ExitCode: &code, Reason: "no space left on device: /r/user_logs/std_log.txt"}},
		{"outputs, the first one wins", []error{errors.New("unrelated"), cache, full}, job.Result{State: job.Completed},
			job.Result{State: job.Failed, Reason: "no space left on device: writing blob to /n/cache/blobs"}},
		{"canceled stays canceled", []error{full}, job.Result{State: job.Canceled, Reason: "canceled by request"},
			job.Result{State: job.Canceled, Reason: "canceled by request"}},
		{"no full disk", []error{errors.New("unrelated")}, job.Result{State: job.Completed}, job.Result{State: job.Completed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Supervisor{}
			for _, err := range tt.noted {
				s.noteDiskFull(err)
			}
			got := s.failIfDiskFull(tt.in)
			if got.State != tt.want.State || got.Reason != tt.want.Reason || got.ExitCode != tt.want.ExitCode {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if err := fileWriteError("/x", syscall.EIO); strings.HasPrefix(err.Error(), "no space") || !errors.Is(err, syscall.EIO) {
		t.Errorf("an I/O error = %v, want it named as what it is", err)
	}
}
