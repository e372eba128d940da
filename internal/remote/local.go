package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/atomicfile"
)

// Local runs commands on this machine with /bin/sh; it is the Runner of targets on the server's own
// machine and a stand-in for a host in tests.
type Local struct {
	// Dir is where commands start and what relative paths are relative to; empty means the
	// user's home directory, as over SSH.
	Dir string
}

var _ Runner = (*Local)(nil)

func (l *Local) dir() string {
	if l.Dir != "" {
		return l.Dir
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

func (l *Local) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir(), p)
}

// Run runs c.Line with /bin/sh -c in its own process group; on ctx done the group is killed.
func (l *Local) Run(ctx context.Context, c Cmd) (int, error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Line)
	cmd.Dir = l.dir()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, orDiscard(c.Stdout), orDiscard(c.Stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Children that keep stdout open (a detached process that forgot to redirect) must not hang Run.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return -1, fmt.Errorf("run: %w", ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return -1, fmt.Errorf("run: %w", err)
	}
	return cmd.ProcessState.ExitCode(), nil
}

// Put writes r to a temporary file beside path, syncs it and renames it over path.
func (l *Local) Put(ctx context.Context, path string, r io.Reader, mode fs.FileMode) error {
	dst := l.abs(path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("put %s: %w", path, err)
	}
	err := atomicfile.Write(dst, mode.Perm(), func(w io.Writer) error {
		_, err := io.Copy(w, ctxReader{ctx, r})
		return err
	})
	if err != nil {
		return fmt.Errorf("put %s: %w", path, err)
	}
	return nil
}

// ReadFile reads path.
func (l *Local) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return os.ReadFile(l.abs(path))
}

// ctxReader stops a copy when its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
