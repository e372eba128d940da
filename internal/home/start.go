package home

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// Running returns the address of a healthy local server, or an error.
func (h Home) Running(ctx context.Context) (*ServerInfo, error) {
	si, err := h.ReadServerInfo()
	if err != nil {
		return nil, err
	}
	tok, _ := h.ReadToken()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := si.Client(tok)
	if err != nil {
		return nil, err
	}
	hl, err := c.Health(ctx)
	if err != nil {
		return nil, err
	}
	if hl.PID != 0 && hl.PID != si.PID {
		return nil, fmt.Errorf("server at %s belongs to another workspace", si.URL)
	}
	return si, nil
}

// Client is a client of the server si describes, trusting the certificate it serves.
func (si *ServerInfo) Client(token string) (*api.Client, error) {
	verify, err := api.WithCA([]byte(si.CA), "")
	if err != nil {
		return nil, fmt.Errorf("server.json: ca: %w", err)
	}
	return api.NewClient(si.URL, token, verify), nil
}

// ConnectClient is Connect's client: the local server's URL and token, and its certificate.
func (h Home) ConnectClient(ctx context.Context, exe string, log io.Writer) (*api.Client, error) {
	if _, _, err := h.Connect(ctx, exe, log); err != nil {
		return nil, err
	}
	si, tok, err := h.ReadServer()
	if err != nil {
		return nil, err
	}
	return si.Client(tok)
}

// Connect returns the URL and token of the local server, starting it in the background (with exe)
// when none runs. Concurrent callers start at most one server.
func (h Home) Connect(ctx context.Context, exe string, log io.Writer) (url, token string, err error) {
	if si, err := h.Running(ctx); err == nil {
		if log != nil && replacedSince(si.PID, exe) {
			fmt.Fprintf(log, "Note: the workspace server (pid %d) runs an older build of %s, replaced since it started; "+
				"`hangar server stop` restarts it with this one on the next command (runs keep going).\n", si.PID, exe)
		}
		tok, err := h.ReadToken()
		return si.URL, tok, err
	}
	if err := h.Ensure(); err != nil {
		return "", "", err
	}
	unlock, err := lockFile(h.startLock())
	if err != nil {
		return "", "", err
	}
	defer unlock()
	if si, err := h.Running(ctx); err == nil { // another CLI started it meanwhile
		tok, err := h.ReadToken()
		return si.URL, tok, err
	}
	if log != nil {
		fmt.Fprintf(log, "Starting the local workspace server in %s (log: %s)\n", h.Dir, h.LogFile())
	}
	logStart := fileSize(h.LogFile())
	exited, err := h.spawn(exe)
	if err != nil {
		return "", "", err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if si, err := h.Running(ctx); err == nil {
			tok, err := h.ReadToken()
			return si.URL, tok, err
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case werr := <-exited:
			if si, err := h.Running(ctx); err == nil { // it lost the race to a server started meanwhile
				tok, err := h.ReadToken()
				return si.URL, tok, err
			}
			return "", "", h.startError(logStart, werr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return "", "", fmt.Errorf("the local server did not start within 30s; see %s", h.LogFile())
}

// spawn starts `exe server` detached (its own session, so it outlives the CLI), with its
// output appended to the server log. The channel yields the server's exit once it ends: while
// the CLI waits for it to answer, a server that fails at start is reported at once.
func (h Home) spawn(exe string) (<-chan error, error) {
	logf, err := os.OpenFile(h.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open server log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(exe, "server", "--home", h.Dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = h.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start local server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}

// StartError is a local server that exited before it answered; Msg is its own last word.
type StartError struct {
	Log  string // the server log
	Msg  string // the error the server printed, or how it exited
	Exit error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("the local server stopped at start: %s (log: %s)", e.Msg, e.Log)
}

func (e *StartError) Unwrap() error { return e.Exit }

// startError reads what the server wrote to its log since offset and picks its error.
func (h Home) startError(offset int64, exit error) error {
	msg := ""
	if f, err := os.Open(h.LogFile()); err == nil {
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(io.NewSectionReader(f, offset, 1<<20), 1<<20))
		msg = lastError(string(b))
	}
	if msg == "" && exit != nil {
		msg = "it " + exit.Error()
	} else if msg == "" {
		msg = "it exited"
	}
	return &StartError{Log: h.LogFile(), Msg: msg, Exit: exit}
}

// lastError picks the error a failed `hangar server` printed ("Error: ..."), else its last line.
func lastError(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "Error: "); ok {
			return msg
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Stop stops the local server: SIGTERM, then SIGKILL after timeout. It reports whether one was running.
func (h Home) Stop(ctx context.Context, timeout time.Duration) (bool, error) {
	pid := h.ReadPID()
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false, nil
	}
	if !h.locked() {
		return false, nil // a stale pid file: no server holds the lock
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return false, fmt.Errorf("stop server %d: %w", pid, err)
	}
	// Stopped once it is gone or the lock is free: another server of a workspace on PostgreSQL
	// may take the lock as it takes the lead (docs/replicas.md).
	stopped := func() bool { return syscall.Kill(pid, 0) != nil || !h.locked() }
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if stopped() {
			return true, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for i := 0; i < 100 && !stopped(); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	return true, nil
}

// locked reports whether a server holds the server lock.
func (h Home) locked() bool {
	release, err := h.Lock()
	if err != nil {
		return true
	}
	release()
	return false
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, errors.Join(errors.New("lock "+path), err)
	}
	return func() { f.Close() }, nil
}

// replacedSince reports whether the server process pid runs an earlier file at the path exe: a
// rebuilt or reinstalled binary (a new file renamed over the old one) while the server kept the
// old one open, so that commands of the new build would meet routes it does not serve. Linux
// only (/proc); false where it cannot tell.
func replacedSince(pid int, exe string) bool {
	if pid <= 0 || exe == "" {
		return false
	}
	proc := fmt.Sprintf("/proc/%d/exe", pid)
	target, err := os.Readlink(proc)
	if err != nil {
		return false
	}
	target = strings.TrimSuffix(target, " (deleted)")
	abs, err := filepath.Abs(exe)
	if err != nil || target != abs {
		return false // another installation: not a rebuild of this one
	}
	running, err1 := os.Stat(proc)
	mine, err2 := os.Stat(abs)
	return err1 == nil && err2 == nil && !os.SameFile(running, mine)
}
