package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Config says how to reach and log in to a host.
type Config struct {
	Host string
	Port int // 22 when zero
	User string
	// KeyFile is a private key file (OpenSSH or PEM, without passphrase); Key is the same content
	// given directly (a key kept in the workspace's secrets). Password is tried after the key.
	KeyFile  string
	Key      []byte
	Password string
	HostKey  HostKeyPolicy
	// Timeout bounds the TCP connect and the SSH handshake (15 s when zero); a context deadline
	// that comes sooner wins.
	Timeout time.Duration
	// MaxSessions bounds the sessions (commands, file transfers) open at once on one connection
	// (8 when zero): OpenSSH refuses more than its MaxSessions, 10 by default. Calls beyond it wait.
	MaxSessions int
}

// Addr is host:port.
func (c Config) Addr() string {
	port := c.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(port))
}

func (c Config) target() string { return c.User + "@" + c.Addr() }

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 15 * time.Second
}

// authMethods returns the configured methods and a description of them for errors.
func (c Config) authMethods() ([]ssh.AuthMethod, string, error) {
	var methods []ssh.AuthMethod
	var names []string
	key := c.Key
	if c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return nil, "", fmt.Errorf("read key file: %w", err)
		}
		key = b
	}
	if len(key) > 0 {
		signer, err := ssh.ParsePrivateKey(key)
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, "", fmt.Errorf("key %s is protected by a passphrase, which Hangar does not support", c.keyName())
		}
		if err != nil {
			return nil, "", fmt.Errorf("parse key %s: %w", c.keyName(), err)
		}
		methods = append(methods, ssh.PublicKeys(signer))
		names = append(names, "key "+c.keyName()+" ("+ssh.FingerprintSHA256(signer.PublicKey())+")")
	}
	if c.Password != "" {
		methods = append(methods, ssh.Password(c.Password))
		names = append(names, "password")
	}
	if len(methods) == 0 {
		return nil, "", errors.New("no key or password given")
	}
	return methods, strings.Join(names, " and "), nil
}

func (c Config) keyName() string {
	if c.KeyFile != "" {
		return c.KeyFile
	}
	return "(given)"
}

// SSH is one SSH connection to a host; it implements Runner. It does not reconnect: see Client.
type SSH struct {
	cfg     Config
	client  *ssh.Client
	hostKey ssh.PublicKey
	slots   chan struct{} // one token per open session
}

var _ Runner = (*SSH)(nil)

// Dial connects and logs in. Its errors are one line naming the host and the cause, and match one of
// ErrUnreachable, ErrTimeout, ErrAuth, ErrHostKeyUnknown, ErrHostKeyChanged (with a *HostKeyError
// showing the presented and expected fingerprints) or ErrHandshake with errors.Is.
func Dial(ctx context.Context, cfg Config) (*SSH, error) {
	target := cfg.target()
	methods, methodNames, err := cfg.authMethods()
	if err != nil {
		return nil, fmt.Errorf("ssh %s: %w", target, err)
	}
	var seen ssh.PublicKey
	cb, algos, err := cfg.HostKey.hostKeyCheck(cfg.Addr(), &seen)
	if err != nil {
		return nil, fmt.Errorf("ssh %s: %w", target, err)
	}
	timeout := cfg.timeout()
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl).Round(time.Millisecond), 0) // for messages: what bounds this dial
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout())
	defer cancel()

	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", cfg.Addr())
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded || isTimeout(err) {
			return nil, &connectError{target: target, kind: ErrTimeout, msg: fmt.Sprintf("connect timed out after %s", timeout)}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ssh %s: %w", target, ctx.Err())
		}
		return nil, &connectError{target: target, kind: ErrUnreachable, msg: "host unreachable", err: stripOp(err)}
	}
	// The handshake knows no context: a deadline bounds it and cancellation closes the socket.
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	ccfg := &ssh.ClientConfig{
		User: cfg.User, Auth: methods, HostKeyCallback: cb, HostKeyAlgorithms: algos, Timeout: timeout,
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, cfg.Addr(), ccfg)
	if err != nil {
		conn.Close()
		var he *HostKeyError
		switch {
		case errors.As(err, &he):
			return nil, &connectError{target: target, kind: he, msg: he.message("")}
		case seen != nil && strings.Contains(err.Error(), "unable to authenticate"):
			return nil, &connectError{target: target, kind: ErrAuth,
				msg: "authentication failed: the host refused " + methodNames}
		case ctx.Err() == context.DeadlineExceeded || isTimeout(err):
			return nil, &connectError{target: target, kind: ErrTimeout, msg: fmt.Sprintf("SSH handshake timed out after %s", timeout)}
		case ctx.Err() != nil:
			return nil, fmt.Errorf("ssh %s: %w", target, ctx.Err())
		}
		detail := errors.New(strings.TrimPrefix(err.Error(), "ssh: handshake failed: "))
		return nil, &connectError{target: target, kind: ErrHandshake, msg: "SSH handshake failed (is an SSH server on that port?)", err: detail}
	}
	if !stop() {
		sc.Close()
		return nil, fmt.Errorf("ssh %s: %w", target, ctx.Err())
	}
	conn.SetDeadline(time.Time{})
	n := cfg.MaxSessions
	if n <= 0 {
		n = 8
	}
	return &SSH{cfg: cfg, client: ssh.NewClient(sc, chans, reqs), hostKey: seen, slots: make(chan struct{}, n)}, nil
}

// HostKey returns the key the host presented, in authorized_keys form: what to store as
// HostKeyPolicy.Pinned after attaching with TrustOnFirstUse.
func (s *SSH) HostKey() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.hostKey)))
}

// listen asks the host to listen on addr (tcpip-forward) and hands over the connections it accepts.
func (s *SSH) listen(ctx context.Context, addr string) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ln, err := s.client.Listen("tcp", addr)
		ch <- result{ln, err}
	}()
	select {
	case r := <-ch:
		return r.ln, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.ln != nil {
				r.ln.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// keepAlive sends one keepalive@openssh.com request and reports whether the host answered within timeout.
func (s *SSH) keepAlive(timeout time.Duration) bool {
	ch := make(chan error, 1)
	go func() {
		_, _, err := s.client.SendRequest("keepalive@openssh.com", true, nil)
		ch <- err
	}()
	select {
	case err := <-ch:
		return err == nil
	case <-time.After(timeout):
		return false
	}
}

// Close closes the connection.
func (s *SSH) Close() error { return s.client.Close() }

// Wait blocks until the connection is closed (by Close, the host, or a failed keepalive).
func (s *SSH) Wait() error { return s.client.Wait() }

// Run runs c.Line in a new session. On ctx done the remote command is sent SIGKILL and the
// session closed.
func (s *SSH) Run(ctx context.Context, c Cmd) (int, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return -1, err
	}
	defer sess.Close()
	sess.Stdout, sess.Stderr = orDiscard(c.Stdout), orDiscard(c.Stderr)
	if c.Stdin != nil {
		sess.Stdin = c.Stdin
	}
	stop := context.AfterFunc(ctx, func() {
		sess.Signal(ssh.SIGKILL)
		sess.Close()
	})
	defer stop()
	err = sess.Run(c.Line)
	if ctx.Err() != nil {
		return -1, fmt.Errorf("run on %s: %w", s.cfg.Addr(), ctx.Err())
	}
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		if ee.Signal() != "" {
			return 128 + signalNumber(ssh.Signal(ee.Signal())), nil
		}
		return ee.ExitStatus(), nil
	}
	if err != nil {
		return -1, fmt.Errorf("run on %s: %w", s.cfg.Addr(), err)
	}
	return 0, nil
}

// session opens a session once a slot is free; opening one waits for the host, so it honours ctx.
// Closing the returned session frees the slot.
func (s *SSH) session(ctx context.Context) (*slotSession, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("open session on %s: %w", s.cfg.Addr(), ctx.Err())
	}
	sess, err := s.newSession(ctx)
	if err != nil {
		<-s.slots
		return nil, err
	}
	return &slotSession{Session: sess, free: func() { <-s.slots }}, nil
}

// slotSession gives its slot back when closed (once).
type slotSession struct {
	*ssh.Session
	once sync.Once
	free func()
}

func (s *slotSession) Close() error {
	err := s.Session.Close()
	s.once.Do(s.free)
	return err
}

func (s *SSH) newSession(ctx context.Context) (*ssh.Session, error) {
	type result struct {
		sess *ssh.Session
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		sess, err := s.client.NewSession()
		ch <- result{sess, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("open session on %s: %w", s.cfg.Addr(), r.err)
		}
		return r.sess, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.sess != nil {
				r.sess.Close()
			}
		}()
		return nil, fmt.Errorf("open session on %s: %w", s.cfg.Addr(), ctx.Err())
	}
}

// sftpDo runs f with an SFTP client on a session of its own, closed when f returns or ctx ends.
func (s *SSH) sftpDo(ctx context.Context, f func(*sftp.Client) error) error {
	sess, err := s.session(ctx)
	if err != nil {
		return err
	}
	defer sess.Close()
	if err := sess.RequestSubsystem("sftp"); err != nil {
		return fmt.Errorf("sftp on %s: %w", s.cfg.Addr(), err)
	}
	w, err := sess.StdinPipe()
	if err != nil {
		return err
	}
	r, err := sess.StdoutPipe()
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { sess.Close() })
	defer stop()
	cl, err := sftp.NewClientPipe(r, w, sftp.UseConcurrentWrites(true))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("sftp on %s: %w", s.cfg.Addr(), err)
	}
	defer cl.Close()
	err = f(cl)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Put uploads r over SFTP into a temporary file beside path, then renames it over path
// (posix-rename, atomic on OpenSSH).
func (s *SSH) Put(ctx context.Context, p string, r io.Reader, mode fs.FileMode) error {
	err := s.sftpDo(ctx, func(cl *sftp.Client) error {
		dir := path.Dir(p)
		if err := cl.MkdirAll(dir); err != nil {
			return fmt.Errorf("mkdir %s: %w", dir, err)
		}
		tmp := path.Join(dir, "."+path.Base(p)+".tmp-"+randHex(6))
		f, err := cl.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		if err != nil {
			return err
		}
		// Many writes in flight: one at a time costs a round trip per 32 KiB.
		_, err = f.ReadFromWithConcurrency(ctxReader{ctx, r}, 64)
		if err == nil {
			err = f.Chmod(mode.Perm())
		}
		if err == nil {
			if serr := f.Sync(); serr != nil && !isUnsupported(serr) {
				err = serr
			}
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = rename(cl, tmp, p)
		}
		if err != nil {
			cl.Remove(tmp)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("put %s on %s: %w", p, s.cfg.Addr(), err)
	}
	return nil
}

// rename replaces newname atomically where the server has posix-rename (OpenSSH), else removes it first.
func rename(cl *sftp.Client, oldname, newname string) error {
	err := cl.PosixRename(oldname, newname)
	if err == nil || !isUnsupported(err) {
		return err
	}
	cl.Remove(newname)
	return cl.Rename(oldname, newname)
}

func isUnsupported(err error) bool {
	var se *sftp.StatusError
	return errors.Is(err, sftp.ErrSSHFxOpUnsupported) || (errors.As(err, &se) && se.FxCode() == sftp.ErrSSHFxOpUnsupported)
}

// ReadFile reads path over SFTP.
func (s *SSH) ReadFile(ctx context.Context, p string) ([]byte, error) {
	var data []byte
	err := s.sftpDo(ctx, func(cl *sftp.Client) error {
		f, err := cl.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		var buf bytes.Buffer
		_, err = f.WriteTo(&buf) // concurrent reads, unlike io.ReadAll
		data = buf.Bytes()
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: s.cfg.Addr() + ":" + p, Err: err}
	}
	return data, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// stripOp turns "dial tcp 10.0.0.1:22: connect: connection refused" into "connection refused".
func stripOp(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err
		}
		return oe.Err
	}
	return err
}

// signalNumber maps the SSH signal names (RFC 4254) to Linux numbers, for exit codes 128+n.
func signalNumber(sig ssh.Signal) int {
	return map[ssh.Signal]int{
		ssh.SIGHUP: 1, ssh.SIGINT: 2, ssh.SIGQUIT: 3, ssh.SIGILL: 4, ssh.SIGABRT: 6, ssh.SIGFPE: 8,
		ssh.SIGKILL: 9, ssh.SIGUSR1: 10, ssh.SIGSEGV: 11, ssh.SIGUSR2: 12, ssh.SIGPIPE: 13,
		ssh.SIGALRM: 14, ssh.SIGTERM: 15,
	}[sig]
}
