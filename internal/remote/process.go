package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/proc"
)

// Detached describes a process to start so that it outlives the connection that started it.
type Detached struct {
	// Line is the shell command line to run (sh -c).
	Line string
	// Dir is where it runs (created if missing); empty means the home directory.
	Dir string
	// Log receives its stdout and stderr, appended (relative to Dir); parent directories are created.
	Log string
	// Env is added to its environment.
	Env map[string]string
}

// Proc is a started process on a host: its pid, and its start time (0 where the host has no
// /proc), the same identity as a process of this machine (proc.Proc).
type Proc = proc.Proc

// StartDetached starts d in a session of its own (setsid; nohup, stdin from /dev/null, output to the
// log), so it survives the SSH connection dropping, and returns its pid, which is also its process
// group and session id.
func StartDetached(ctx context.Context, r Runner, d Detached) (Proc, error) {
	if d.Log == "" {
		return Proc{}, errors.New("start detached: no log file")
	}
	var env strings.Builder // "env K=V ... " when there is an environment
	keys := make([]string, 0, len(d.Env))
	for k := range d.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == 0 {
			env.WriteString("env ")
		}
		if !validEnvName(k) {
			return Proc{}, fmt.Errorf("start detached: invalid environment variable name %q", k)
		}
		env.WriteString(k + "=" + Quote(d.Env[k]) + " ")
	}
	// The inner shell prints its pid (the session leader's: setsid without a fork, as a background
	// job is no group leader), then replaces its streams and itself with the command.
	inner := "echo $$; exec " + env.String() + "sh -c " + Quote(d.Line) + " </dev/null >>" + Quote(d.Log) + " 2>&1"
	dir := d.Dir
	if dir == "" {
		dir = "."
	}
	script := "set -e; mkdir -p " + Quote(dir) + "; cd " + Quote(dir) + "; mkdir -p " + Quote(path.Dir(d.Log)) + "\n" +
		"command -v setsid >/dev/null || { echo 'setsid not found (util-linux)' >&2; exit 127; }\n" +
		"pid=$( (setsid nohup sh -c " + Quote(inner) + " & ) | head -n 1)\n" +
		"[ -n \"$pid\" ] || exit 1\n" +
		"echo \"$pid\"; cat /proc/\"$pid\"/stat 2>/dev/null || true\n"
	out, err := output(ctx, r, Cmd{Line: script})
	if err != nil {
		return Proc{}, fmt.Errorf("start detached: %w", err)
	}
	first, rest, _ := strings.Cut(string(out), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return Proc{}, fmt.Errorf("start detached: unexpected output %q", out)
	}
	p := Proc{PID: pid}
	if st, ok := node.ParseStat(rest); ok && st.PID == pid {
		p.StartTime = st.StartTime
	}
	return p, nil
}

// Alive reports whether p is still running (a zombie or a process with the same pid but another
// start time is not p).
func Alive(ctx context.Context, r Runner, p Proc) (bool, error) {
	if p.PID <= 0 {
		return false, fmt.Errorf("alive: invalid pid %d", p.PID)
	}
	pid := strconv.Itoa(p.PID)
	// One read of /proc, not a test and then a read: a process that ends between the two made
	// cat fail and the call an error instead of "gone" (seen in CI).
	out, err := Output(ctx, r, "cat /proc/"+pid+"/stat 2>/dev/null || "+
		"{ if kill -0 "+pid+" 2>/dev/null; then echo alive; else echo gone; fi; }")
	if err != nil {
		return false, fmt.Errorf("alive %d: %w", p.PID, err)
	}
	return aliveFrom(string(out), p), nil
}

// aliveFrom reads the output of Alive's command.
func aliveFrom(out string, p Proc) bool {
	switch strings.TrimSpace(out) {
	case "alive":
		return true
	case "gone", "":
		return false
	}
	st, ok := node.ParseStat(out)
	return ok && p.Is(st)
}

// Signal sends sig to p's process group (StartDetached made p its leader), so the command's children
// get it too. It returns ErrProcessGone when no such process runs (or its pid was reused).
func Signal(ctx context.Context, r Runner, p Proc, sig syscall.Signal) error {
	name, ok := signalNames[sig]
	if !ok {
		return fmt.Errorf("signal %d: unsupported signal %v", p.PID, sig)
	}
	if p.PID <= 1 {
		return fmt.Errorf("signal: invalid pid %d", p.PID)
	}
	alive, err := Alive(ctx, r, p)
	if err != nil {
		return err
	}
	if !alive {
		return fmt.Errorf("signal %d: %w", p.PID, ErrProcessGone)
	}
	pid := strconv.Itoa(p.PID)
	// The group if p leads one, else p alone.
	_, err = Output(ctx, r, "kill -s "+name+" -- -"+pid+" 2>/dev/null || kill -s "+name+" "+pid)
	var ee *ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("signal %d: %w (%v)", p.PID, ErrProcessGone, ee)
	}
	if err != nil {
		return fmt.Errorf("signal %d: %w", p.PID, err)
	}
	return nil
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "HUP", syscall.SIGINT: "INT", syscall.SIGQUIT: "QUIT", syscall.SIGKILL: "KILL",
	syscall.SIGUSR1: "USR1", syscall.SIGUSR2: "USR2", syscall.SIGTERM: "TERM", syscall.SIGCONT: "CONT",
	syscall.SIGSTOP: "STOP",
}

// TailFile returns up to max bytes of path from offset on, and the file's current size (a size
// below offset means the file was truncated or replaced). A missing file is fs.ErrNotExist.
func TailFile(ctx context.Context, r Runner, path string, offset int64, max int) (data []byte, size int64, err error) {
	if offset < 0 || max <= 0 {
		return nil, 0, fmt.Errorf("tail %s: invalid offset %d or max %d", path, offset, max)
	}
	q := Quote(path)
	line := "[ -f " + q + " ] || exit 44; wc -c < " + q + "; tail -c +" + strconv.FormatInt(offset+1, 10) + " " + q +
		" | head -c " + strconv.Itoa(max)
	out, err := output(ctx, r, Cmd{Line: line})
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code == 44 {
		return nil, 0, fmt.Errorf("tail %s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("tail %s: %w", path, err)
	}
	first, rest, ok := bytes.Cut(out, []byte("\n"))
	size, perr := strconv.ParseInt(strings.TrimSpace(string(first)), 10, 64)
	if !ok || perr != nil {
		return nil, 0, fmt.Errorf("tail %s: unexpected output %q", path, first)
	}
	if size < offset {
		return nil, size, nil
	}
	return rest, size, nil
}

func validEnvName(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
