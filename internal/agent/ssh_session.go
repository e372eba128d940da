package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/crypto/ssh"

	"github.com/hangar-ml/hangar/internal/runbox"
)

// sshSession is one session channel: at most one command (a shell, an exec or the sftp
// subsystem), run in the box, with a pty when the client asked for one.
type sshSession struct {
	srv *sshServer
	ch  ssh.Channel
	log *slog.Logger

	mu      sync.Mutex
	env     []string // TERM and LANG the client sent
	pty     *ptyReq
	ptmx    *os.File
	stdin   *os.File // the command's input, without a pty
	started bool
	// waited is closed as soon as the command was waited for (its process group may be
	// reused from then on: no more signals to it).
	waited chan struct{}
}

// ptyReq is a pty-req's payload (RFC 4254 6.2).
type ptyReq struct {
	Term             string
	Cols, Rows, W, H uint32
	Modes            string
}

// winChange is a window-change's payload (RFC 4254 6.7).
type winChange struct {
	Cols, Rows, W, H uint32
}

// allowedEnv are the environment variables a client may set (sshd's AcceptEnv, narrowed).
var allowedEnv = map[string]bool{"TERM": true, "LANG": true}

// serve answers the session's requests until the client closes it, and ends its command then.
func (s *sshSession) serve(ctx context.Context, reqs <-chan *ssh.Request) {
	defer s.ch.Close()
	s.waited = make(chan struct{})
	exited := make(chan struct{}) // closed once the command's exit status was sent
	var cmd *exec.Cmd
	for {
		select {
		case <-exited:
			exited = nil // the command ended: the session closes once the client closes it
			_ = s.ch.Close()
			continue
		case req, ok := <-reqs:
			if !ok {
				s.end(cmd)
				return
			}
			c, reply := s.request(ctx, req, exited)
			if c != nil {
				cmd = c
			}
			if req.WantReply {
				_ = req.Reply(reply, nil)
			}
		}
	}
}

// request acts on one request; a command it started is returned.
func (s *sshSession) request(ctx context.Context, req *ssh.Request, exited chan struct{}) (*exec.Cmd, bool) {
	switch req.Type {
	case "pty-req":
		var p ptyReq
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return nil, false
		}
		s.mu.Lock()
		s.pty = &p
		s.mu.Unlock()
		return nil, true
	case "env":
		var kv struct{ Name, Value string }
		if ssh.Unmarshal(req.Payload, &kv) != nil || !allowedEnv[kv.Name] || strings.ContainsRune(kv.Value, 0) {
			return nil, false
		}
		s.mu.Lock()
		s.env = append(s.env, kv.Name+"="+kv.Value)
		s.mu.Unlock()
		return nil, true
	case "window-change":
		var w winChange
		if ssh.Unmarshal(req.Payload, &w) == nil {
			s.resize(w.Cols, w.Rows)
		}
		return nil, true
	case "shell", "exec", "subsystem":
		argv, err := s.argv(req)
		if err != nil {
			_, _ = fmt.Fprintf(s.ch.Stderr(), "hangar: %v\r\n", err)
			return nil, false
		}
		cmd, err := s.start(argv, exited)
		if err != nil {
			s.log.Warn("ssh: session command", "err", err)
			_, _ = fmt.Fprintf(s.ch.Stderr(), "hangar: %v\r\n", err)
			return nil, false
		}
		return cmd, true
	}
	return nil, false
}

// argv is the command a shell, exec or subsystem request runs: the user's shell (a login shell,
// or with -c and the command as one argument: never parsed here), or the sftp server.
func (s *sshSession) argv(req *ssh.Request) ([]string, error) {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		return nil, errors.New("the session already runs a command")
	}
	shell := loginShell()
	switch req.Type {
	case "shell":
		return []string{shell, "-l"}, nil
	case "exec":
		var p struct{ Command string }
		if err := ssh.Unmarshal(req.Payload, &p); err != nil {
			return nil, fmt.Errorf("exec request: %w", err)
		}
		return []string{shell, "-c", p.Command}, nil
	}
	var p struct{ Name string }
	if err := ssh.Unmarshal(req.Payload, &p); err != nil || p.Name != "sftp" {
		return nil, fmt.Errorf("subsystem %q: only sftp is served", p.Name)
	}
	if len(s.srv.sftp) == 0 {
		return nil, errors.New("no sftp server on this node")
	}
	return s.srv.sftp, nil
}

// start starts argv in the box, wired to the channel (through a pty when one was asked for,
// except for sftp), and sends its exit status once it ended.
func (s *sshSession) start(argv []string, exited chan struct{}) (*exec.Cmd, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := append(append(scrubbedEnv(os.Environ()), s.srv.box.UserEnv(s.srv.dir)...), s.env...)
	if s.pty != nil && s.pty.Term != "" {
		env = append(env, "TERM="+s.pty.Term)
	}
	box := s.srv.box
	cmd := box.Command(false, s.srv.dir, env, argv[0], argv[1:]...)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGHUP // ended with the agent should it be killed
	var copied sync.WaitGroup
	if s.pty != nil && !isSFTP(argv, s.srv.sftp) {
		// A terminal's session leader: its own session (so also its own process group).
		cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty = false, true, true
		ptmx, tty, err := pty.Open()
		if err != nil {
			return nil, fmt.Errorf("open a pty: %w", err)
		}
		_ = pty.Setsize(ptmx, &pty.Winsize{Rows: uint16(s.pty.Rows), Cols: uint16(s.pty.Cols)})
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd, err = box.Start(cmd)
		tty.Close()
		if err != nil {
			ptmx.Close()
			return nil, fmt.Errorf("start %s on a pty: %w", filepath.Base(argv[0]), err)
		}
		s.ptmx = ptmx
		go func() { _, _ = io.Copy(ptmx, s.ch) }()
		copied.Add(1)
		go func() { defer copied.Done(); _, _ = io.Copy(s.ch, ptmx) }()
	} else {
		// The input is a pipe of our own (not StdinPipe): Start may need to give it to a
		// second attempt at the sandbox.
		in, stdin, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, s.ch, s.ch.Stderr()
		// Background processes holding the output open do not hold the session's end.
		cmd.WaitDelay = time.Second
		cmd, err = box.Start(cmd)
		in.Close()
		if err != nil {
			stdin.Close()
			return nil, fmt.Errorf("start %s: %w", filepath.Base(argv[0]), err)
		}
		go func() { _, _ = io.Copy(stdin, s.ch); stdin.Close() }()
		s.stdin = stdin
	}
	if err := box.Started(cmd); err != nil {
		s.log.Warn("ssh: session not in the box's cgroup", "err", err)
	}
	s.started = true
	go func() {
		err := cmd.Wait()
		if s.stdin != nil {
			s.stdin.Close() // the command's input ends with it, as StdinPipe's would
		}
		close(s.waited)
		if s.ptmx != nil {
			waitCopied(&copied, time.Second)
			s.ptmx.Close()
		}
		_, _ = s.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{exitStatus(err)}))
		_ = s.ch.CloseWrite()
		close(exited)
	}()
	return cmd, nil
}

// waitCopied waits for a pty's output to be copied, at most d (a background process may hold
// the terminal open).
func waitCopied(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

func isSFTP(argv, sftp []string) bool {
	return len(sftp) > 0 && len(argv) == len(sftp) && argv[0] == sftp[0]
}

// resize applies a window-change to the session's pty.
func (s *sshSession) resize(cols, rows uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pty != nil {
		s.pty.Cols, s.pty.Rows = cols, rows
	}
	if s.ptmx != nil {
		_ = pty.Setsize(s.ptmx, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
	}
}

// end stops a session's command the client left (it closed the channel): SIGHUP to its
// process group, as a terminal's hangup, then SIGKILL to what is left of it after a while.
func (s *sshSession) end(cmd *exec.Cmd) {
	if cmd == nil {
		return
	}
	pgid := cmd.Process.Pid // its own group (Setpgid or Setsid): not reused while not waited for
	signal := func(sig syscall.Signal) {
		select {
		case <-s.waited:
		default:
			s.srv.box.Signal(pgid, sig)
		}
	}
	signal(syscall.SIGHUP)
	time.AfterFunc(5*time.Second, func() { signal(syscall.SIGKILL) })
}

// exitStatus is a command's exit status for exit-status: its code, 128+signal when killed.
func exitStatus(err error) uint32 {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 255
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + uint32(ws.Signal())
	}
	return uint32(ee.ExitCode())
}

// loginShell is the agent's user's shell from /etc/passwd, else /bin/sh.
func loginShell() string {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return "/bin/sh"
	}
	defer f.Close()
	uid := fmt.Sprint(os.Getuid())
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) == 7 && fields[2] == uid && filepath.IsAbs(fields[6]) {
			if _, err := os.Stat(fields[6]); err == nil && !strings.HasSuffix(fields[6], "nologin") && !strings.HasSuffix(fields[6], "/false") {
				return fields[6]
			}
		}
	}
	return "/bin/sh"
}

// openSessionBox is the SSH sessions' box: sandboxed as the node's runs are (HANGAR_SANDBOX),
// the agent's work dir and the workspace's home hidden, only the instance's files directory
// shown again (and the hangar binary, read-only, for sftp).
func openSessionBox(ctx context.Context, workDir, files string, hide, sftp []string, log *slog.Logger) (*runbox.Box, error) {
	mode, err := runbox.ParseMode(os.Getenv(runbox.ModeEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", runbox.ModeEnv, err)
	}
	if err := os.MkdirAll(files, 0o700); err != nil {
		return nil, fmt.Errorf("ssh sessions' directory: %w", err)
	}
	var ro []string
	if len(sftp) > 0 {
		ro = []string{sftp[0]}
	}
	dir := filepath.Join(workDir, "ssh")
	// What sessions of an agent that was killed left running ends before new sessions start.
	if r, err := runbox.Reap(ctx, "ssh", dir); err == nil && r.Processes+r.Containers > 0 {
		log.Info("ssh: an earlier server's sessions left processes: " + r.String())
	}
	o := runbox.Options{RunID: "ssh", Dir: dir, Hide: hide, Share: []string{files}, ReadOnly: ro, Sandbox: mode}
	if mode != runbox.SandboxOff { // a session runs what the instance's user types: as a run does
		if o.User, err = runbox.RunUser(os.Getenv(runbox.RunUserEnv), os.Geteuid()); err != nil {
			return nil, err
		}
	}
	box, warnings, err := runbox.Open(ctx, o)
	for _, w := range warnings {
		log.Warn("ssh: " + w)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh sessions' sandbox: %w", err)
	}
	if err := runbox.Chown(box.User(), files); err != nil {
		box.End(ctx)
		return nil, err
	}
	return box, nil
}
