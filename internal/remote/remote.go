package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Runner runs commands and moves files on one host. Relative paths are relative to the directory
// commands start in: the user's home directory over SSH (as for sftp), Local.Dir locally. A leading
// "~" is not expanded anywhere; write home-relative paths without it (".hangar/bin").
type Runner interface {
	// Run runs c.Line with the host's shell (sh -c locally, the login shell over SSH) and returns its
	// exit status (128+n when killed by signal n). A non-zero exit is not an error: err is set only
	// when the command could not be run or its status not learned (transport failure, ctx done).
	Run(ctx context.Context, c Cmd) (exitCode int, err error)
	// Put writes r to path atomically: into a temporary file in the same directory, then renamed over
	// path, so a reader sees the old file or the whole new one. Parent directories are created.
	Put(ctx context.Context, path string, r io.Reader, mode fs.FileMode) error
	// ReadFile returns the content of path; a missing file gives an error that is fs.ErrNotExist.
	ReadFile(ctx context.Context, path string) ([]byte, error)
}

// Cmd is one shell command line and its standard streams; nil streams are empty (stdin) or discarded.
// Build the line with Quote/Join: every argument that is not a constant must be quoted.
type Cmd struct {
	Line   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// ExitError is a command that ran and exited non-zero, from Output and the helpers built on it.
type ExitError struct {
	Code   int
	Stderr string // the last few lines of its standard error
}

func (e *ExitError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return fmt.Sprintf("exit status %d: %s", e.Code, e.Stderr)
}

// Output runs line and returns its standard output; a non-zero exit is an *ExitError with the end of
// its standard error.
func Output(ctx context.Context, r Runner, line string) ([]byte, error) {
	return output(ctx, r, Cmd{Line: line})
}

// output runs c capturing stdout and the tail of stderr (c's own Stdout/Stderr are ignored).
func output(ctx context.Context, r Runner, c Cmd) ([]byte, error) {
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 4 << 10}
	c.Stdout, c.Stderr = &stdout, stderr
	code, err := r.Run(ctx, c)
	if err != nil {
		return stdout.Bytes(), err
	}
	if code != 0 {
		return stdout.Bytes(), &ExitError{Code: code, Stderr: lastLines(stderr.String(), 3)}
	}
	return stdout.Bytes(), nil
}

// Home returns the absolute path of the directory relative paths start from (the home directory).
func Home(ctx context.Context, r Runner) (string, error) {
	out, err := Output(ctx, r, `pwd -P`)
	if err != nil {
		return "", fmt.Errorf("home directory: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// PutFile copies a local file to path on r, atomically, with the given mode.
func PutFile(ctx context.Context, r Runner, path string, local string, mode fs.FileMode) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.Put(ctx, path, f, mode)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }

// lastLines returns the last n non-empty lines of s joined with "; ", for one-line errors.
func lastLines(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "; ")
}

// orDiscard stands in io.Discard for a nil stream.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
