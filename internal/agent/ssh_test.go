package agent

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/runbox"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// sftpHelperArg makes this test binary serve SFTP on its stdin and stdout (the agent runs
// `hangar agent sftp-server` there; the test binary stands in for hangar).
const sftpHelperArg = "agent-test-sftp-server"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sftpHelperArg {
		srv, err := sftp.NewServer(struct {
			io.Reader
			io.WriteCloser
		}{os.Stdin, os.Stdout})
		if err == nil {
			err = srv.Serve()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// newClientKey is a fresh ed25519 key: its signer, and its authorized_keys line.
func newClientKey(t *testing.T) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer, string(ssh.MarshalAuthorizedKey(signer.PublicKey()))
}

// sshFixture is an agent's SSH service as the agent runs it (the box hides the work dir and a
// directory standing for the workspace's home), started for keys, and its report.
type sshFixture struct {
	svc     *sshService
	report  *api.SSHReport
	workDir string
	secret  string // a file in a hidden directory
}

func startSSH(t *testing.T, keys string) *sshFixture {
	t.Helper()
	t.Setenv(runbox.ModeEnv, "auto")
	workDir, home := t.TempDir(), t.TempDir()
	secret := filepath.Join(home, "secret.key")
	if err := os.WriteFile(secret, []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := newSSHService(workDir, "http://127.0.0.1:8700", []string{workDir, home}, []string{exe, sftpHelperArg}, log)
	svc.want(keys)
	t.Cleanup(svc.stop)
	f := &sshFixture{svc: svc, workDir: workDir, secret: secret}
	testwait.Within(t, 20*time.Second, "the ssh server to report running", func() bool {
		r, _, _ := svc.take()
		if r != nil && r.State == api.SSHFailed {
			t.Fatalf("ssh server failed: %s", r.Reason)
		}
		f.report = r
		return r != nil && r.State == api.SSHRunning
	})
	return f
}

// dial connects with key, pinning the reported host key.
func (f *sshFixture) dial(key ssh.Signer) (*ssh.Client, error) {
	hostKey, _, _, _, err := ssh.ParseAuthorizedKey([]byte(f.report.HostKey))
	if err != nil {
		return nil, err
	}
	return ssh.Dial("tcp", f.report.Addr, &ssh.ClientConfig{User: "dev", Auth: []ssh.AuthMethod{ssh.PublicKeys(key)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 10 * time.Second})
}

func (f *sshFixture) client(t *testing.T, key ssh.Signer) *ssh.Client {
	t.Helper()
	c, err := f.dial(key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// needsSandbox fails the test when CI is set (the project's scripts install bubblewrap) and
// skips it where bubblewrap does not work.
func needsSandbox(t *testing.T) {
	t.Helper()
	if err := exec.Command("bwrap", "--dev-bind", "/", "/", "true").Run(); err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("bubblewrap is required with CI set")
	}
	t.Skip("needs a working bubblewrap")
}

func TestSSHAdmitsOnlyItsKeys(t *testing.T) {
	key, line := newClientKey(t)
	other, otherLine := newClientKey(t)
	_, third := newClientKey(t)
	f := startSSH(t, "# the team\n"+third+"\n"+line)
	if _, err := f.dial(other); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("another key: %v, want refused", err)
	}
	f.client(t, key).Close()

	// New keys apply to the next connections, on the same server and host key.
	f.svc.want(otherLine)
	f.client(t, other).Close()
	if _, err := f.dial(key); err == nil {
		t.Fatal("a key no longer authorized was admitted")
	}
	if r, _, _ := f.svc.take(); r == nil || r.Addr != f.report.Addr || r.HostKey != f.report.HostKey {
		t.Fatalf("report after new keys %+v, want the same server %+v", r, f.report)
	}
}

func TestSSHHostKeyKept(t *testing.T) {
	_, line := newClientKey(t)
	f := startSSH(t, line)
	path := filepath.Join(f.workDir, "ssh_host_ed25519_key")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("host key file: %v %v, want mode 0600", st, err)
	}
	f.svc.stop()
	if r, _, _ := f.svc.take(); r != nil {
		t.Fatalf("report after stop: %+v, want none", r)
	}
	if _, err := f.dial(nil); err == nil {
		t.Fatal("the stopped server still answers")
	}
	f.svc.want(line)
	var r *api.SSHReport
	testwait.Within(t, 10*time.Second, "the ssh server to start again", func() bool {
		r, _, _ = f.svc.take()
		return r != nil && r.State == api.SSHRunning
	})
	if r.HostKey != f.report.HostKey {
		t.Fatalf("host key changed across a restart: %s, was %s", r.HostKey, f.report.HostKey)
	}
}

func TestSSHExec(t *testing.T) {
	key, line := newClientKey(t)
	f := startSSH(t, line)
	c := f.client(t, key)
	cases := []struct {
		name, cmd  string
		stdin      string
		wantOut    string
		wantErr    string
		wantStatus int
	}{
		{"output", "echo hello; echo oops >&2", "", "hello\n", "oops\n", 0},
		{"exit status", "exit 7", "", "", "", 7},
		{"stdin", "tr a-z A-Z", "shout\n", "SHOUT\n", "", 0},
		{"quoting is the shell's", `printf '%s|' "a b" 'c;d'`, "", "a b|c;d|", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var out, errOut bytes.Buffer
			s.Stdout, s.Stderr, s.Stdin = &out, &errOut, strings.NewReader(tc.stdin)
			err = s.Run(tc.cmd)
			status := 0
			var ee *ssh.ExitError
			if errors.As(err, &ee) {
				status = ee.ExitStatus()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tc.wantStatus || out.String() != tc.wantOut || errOut.String() != tc.wantErr {
				t.Fatalf("status %d out %q err %q, want %d %q %q", status, out.String(), errOut.String(), tc.wantStatus, tc.wantOut, tc.wantErr)
			}
		})
	}
}

// Sessions run in the runs' box: the agent's work dir and the workspace's home are hidden; the
// instance's files directory, where sessions start, is not.
func TestSSHSessionsAreBoxed(t *testing.T) {
	needsSandbox(t)
	key, line := newClientKey(t)
	f := startSSH(t, line)
	c := f.client(t, key)
	out, err := run(c, "pwd; cat "+f.secret+" || echo no-secret; ls "+f.workDir+" | wc -l")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := filepath.Join(f.workDir, "notebooks") + "\n"
	if !strings.HasPrefix(out, want) || strings.Contains(out, "top secret") || !strings.Contains(out, "no-secret") {
		t.Fatalf("session output %q: want it to start in %s and not read %s", out, want, f.secret)
	}
	if !strings.HasSuffix(out, "1\n") { // the files directory only, bound back
		t.Errorf("the session sees the work dir's contents: %q", out)
	}
}

func run(c *ssh.Client, cmd string) (string, error) {
	s, err := c.NewSession()
	if err != nil {
		return "", err
	}
	defer s.Close()
	out, err := s.CombinedOutput(cmd)
	return string(out), err
}

func TestSSHPtyShell(t *testing.T) {
	key, line := newClientKey(t)
	f := startSSH(t, line)
	c := f.client(t, key)
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Setenv("LANG", "C.UTF-8"); err != nil {
		t.Fatal(err)
	}
	if err := s.Setenv("SECRET_OPTION", "x"); err == nil {
		t.Fatal("an environment variable other than TERM and LANG was accepted")
	}
	if err := s.RequestPty("xterm-hangar", 30, 100, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s.Stdout = &out
	stdin, err := s.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	if err := s.WindowChange(40, 120); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the window change is a message without a reply
	if _, err := io.WriteString(stdin, "tty >/dev/null && echo \"T=$TERM L=$LANG S=$(stty size)\"; exit 3\n"); err != nil {
		t.Fatal(err)
	}
	err = s.Wait()
	var ee *ssh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 3 {
		t.Fatalf("shell ended with %v, want exit status 3; output %q", err, out.String())
	}
	if !strings.Contains(out.String(), "T=xterm-hangar L=C.UTF-8 S=40 120") {
		t.Fatalf("shell output %q lacks its terminal, language and window size", out.String())
	}
}

func TestSSHSFTP(t *testing.T) {
	key, line := newClientKey(t)
	f := startSSH(t, line)
	c := f.client(t, key)
	sc, err := sftp.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	w, err := sc.Create("put.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("uploaded")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, err := os.ReadFile(filepath.Join(f.workDir, "notebooks", "put.txt"))
	if err != nil || string(got) != "uploaded" {
		t.Fatalf("the put file on the node: %q %v", got, err)
	}
	r, err := sc.Open("put.txt")
	if err != nil {
		t.Fatal(err)
	}
	back, _ := io.ReadAll(r)
	r.Close()
	if string(back) != "uploaded" {
		t.Fatalf("got back %q", back)
	}
}

// An open session counts as an SSH session in the activity report.
func TestSSHSessionsCountAsActivity(t *testing.T) {
	key, line := newClientKey(t)
	f := startSSH(t, line)
	// No process of the node is sshd's: an empty /proc.
	a := &Agent{cfg: Config{Now: time.Now}, jupyter: newJupyter("", "", nil, nil), ssh: f.svc, activity: activityMeter{proc: t.TempDir()}}
	if act := a.sshActivity(a.activity.report(time.Now())); act == nil || act.SSHSessions != 0 {
		t.Fatalf("activity with no session: %+v", act)
	}
	c := f.client(t, key)
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a.activity.last = time.Time{}
	act := a.sshActivity(a.activity.report(time.Now()))
	if act == nil || act.SSHSessions != 1 || act.SSH == nil || act.SSH.Addr != f.report.Addr {
		t.Fatalf("activity with a session open: %+v", act)
	}
}

// Keys the server cannot read stop it (the old keys are not admitted any longer) and the report
// says why, naming the spec's field.
func TestSSHUnreadableKeys(t *testing.T) {
	key, line := newClientKey(t)
	f := startSSH(t, line)
	f.svc.want("ssh-ed25519 not-base64!")
	var r *api.SSHReport
	testwait.Within(t, 10*time.Second, "the ssh server to report failed", func() bool {
		r, _, _ = f.svc.take()
		return r != nil && r.State == api.SSHFailed
	})
	if r == nil || r.State != api.SSHFailed || !strings.Contains(r.Reason, "ssh_settings.ssh_key_value line 1") {
		t.Fatalf("report %+v, want failed naming ssh_settings.ssh_key_value", r)
	}
	if _, err := f.dial(key); err == nil {
		t.Fatal("the old key is still admitted")
	}
}

func TestParseAuthorizedKeys(t *testing.T) {
	_, a := newClientKey(t)
	_, b := newClientKey(t)
	cases := []struct {
		name, text string
		want       int
		wantErr    string
	}{
		{"one", a, 1, ""},
		{"several, comments and blank lines", "# laptop\n" + a + "\n\n" + b, 2, ""},
		{"none", "# nothing\n", 0, "no public key"},
		{"garbage on line 2", strings.TrimSpace(a) + "\nhello", 0, "line 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys, err := parseAuthorizedKeys(c.text)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(keys) != c.want {
				t.Fatalf("%d keys, %v; want %d", len(keys), err, c.want)
			}
		})
	}
}
