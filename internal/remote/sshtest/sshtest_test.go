package sshtest

import (
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func start(t *testing.T, opts Options) *Server {
	if testing.Short() {
		t.Skip("sshd integration test (-short)")
	}
	return Start(t, opts)
}

func dial(t *testing.T, s *Server, auth ssh.AuthMethod, user string) (*ssh.Client, error) {
	t.Helper()
	cb, err := knownhosts.New(s.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	return ssh.Dial("tcp", s.Addr(), &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{auth}, HostKeyCallback: cb, Timeout: time.Second})
}

func keyAuth(t *testing.T, s *Server) ssh.AuthMethod {
	b, err := os.ReadFile(s.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return ssh.PublicKeys(signer)
}

func output(t *testing.T, c *ssh.Client, cmd string) string {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("%s: %v: %s", cmd, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestLoopbackKeyAndPassword(t *testing.T) {
	s := start(t, Options{Password: true})
	c, err := dial(t, s, keyAuth(t, s), s.User)
	if err != nil {
		t.Fatalf("key login: %v\n%s", err, s.Log())
	}
	defer c.Close()
	if got := output(t, c, "id -un"); got != "root" {
		t.Errorf("id -un = %q", got)
	}
	pc, err := dial(t, s, ssh.Password(s.Password), s.TestUser)
	if err != nil {
		t.Fatalf("password login: %v\n%s", err, s.Log())
	}
	defer pc.Close()
	if got := output(t, pc, "id -un"); got != s.TestUser {
		t.Errorf("id -un = %q, want %q", got, s.TestUser)
	}
	kc, err := dial(t, s, keyAuth(t, s), s.TestUser)
	if err != nil {
		t.Fatalf("test user key login: %v\n%s", err, s.Log())
	}
	defer kc.Close()
	if got := output(t, kc, "pwd"); got != "/home/"+s.TestUser {
		t.Errorf("home = %q", got)
	}
}

func TestNetNSCutAndRestore(t *testing.T) {
	s := start(t, Options{NetNS: true})
	if !strings.HasPrefix(s.Host, "10.213.") || s.Port != 22 {
		t.Fatalf("addr %s, want 10.213.x.y:22", s.Addr())
	}
	c, err := dial(t, s, keyAuth(t, s), s.User)
	if err != nil {
		t.Fatalf("login: %v\n%s", err, s.Log())
	}
	c.Close()
	s.CutLink(t)
	if c, err := dial(t, s, keyAuth(t, s), s.User); err == nil {
		c.Close()
		t.Fatal("dial succeeded over a cut link")
	}
	s.RestoreLink(t)
	c, err = dial(t, s, keyAuth(t, s), s.User)
	if err != nil {
		t.Fatalf("login after restore: %v", err)
	}
	c.Close()
}

func TestRestartWithNewHostKey(t *testing.T) {
	s := start(t, Options{})
	old := s.HostKey()
	s.Restart(t, true)
	if s.HostKey() == old {
		t.Fatal("host key unchanged")
	}
	c, err := dial(t, s, keyAuth(t, s), s.User)
	if err != nil {
		t.Fatalf("login after restart: %v\n%s", err, s.Log())
	}
	c.Close()
}
