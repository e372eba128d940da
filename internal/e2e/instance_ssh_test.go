package e2e

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// An instance on the local provider with ssh_public_access_enabled and a generated key, over
// HTTPS: its owner (a reader, by create_on_behalf_of) runs `hangar compute connect-ssh` with the
// real OpenSSH client, through the workspace server, the host key pinned; the session runs in the
// runs' box (the workspace's secret key is not there); scp copies both ways through the same
// ProxyCommand; an open session keeps the instance busy as an SSH session, and its end is seen;
// another reader, and no token, are refused; a stopped instance says it is not running.
func TestInstanceSSH(t *testing.T) {
	for _, tool := range []string{"ssh", "scp", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (OpenSSH's client: scripts/setup installs it)", tool)
		}
	}
	w := newWSEnv(t, []string{"HANGAR_TEST_INSTANCE_MINUTE=200ms", "HANGAR_TEST_INSTANCE_CPU_THRESHOLD=101"}, "--tls")
	si, err := (&home.Home{Dir: w.home}).ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	fp := pemFingerprint(t, si.CA)
	tokens := map[string]string{}
	for _, name := range []string{"opal", "rita"} {
		tokens[name] = strings.TrimSpace(w.ok("user", "create", name, "--role", "reader").stdout)
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "opal@laptop", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub := strings.TrimSpace(readFile(t, key+".pub"))
	writeFiles(t, dir, map[string]string{"vm.yml": `$schema: https://azuremlschemas.azureedge.net/latest/computeInstance.schema.json
name: ssh1
type: computeinstance
size: local-quarter
create_on_behalf_of: {user_object_id: opal}
ssh_public_access_enabled: true
ssh_settings:
  ssh_key_value: ` + pub + "\n"})
	w.ok("compute", "create", "-f", filepath.Join(dir, "vm.yml"))
	w.waitInstance("ssh1", 2*time.Minute, "Running")
	testwait.Within(t, 2*time.Minute, "compute show to say SSH runs", func() bool {
		in := w.instance("ssh1")
		if strings.HasPrefix(in.SSH, "failed") {
			t.Fatalf("SSH %s", in.SSH)
		}
		return strings.HasPrefix(in.SSH, "running") && strings.HasPrefix(in.SSHHostKey, "ssh-ed25519 ")
	})

	opal := remoteUser{t: t, env: append(w.env(), "HANGAR_URL="+si.URL, "HANGAR_TOKEN="+tokens["opal"], "XDG_CONFIG_HOME="+t.TempDir())}
	opal.ok("--trust-fingerprint", fp, "compute", "show", "ssh1") // pins the server's certificate
	sshArgs := []string{"-F", "/dev/null", "-i", key, "-o", "BatchMode=yes"}
	secret := filepath.Join(w.home, "secret.key")
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("the workspace's secret key: %v", err)
	}
	r := opal.run(append(append([]string{"compute", "connect-ssh", "ssh1", "--"}, sshArgs...), "echo hi; cat "+secret)...)
	if !strings.HasPrefix(r.stdout, "hi\n") {
		t.Fatalf("connect-ssh: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "No such file") || strings.TrimSpace(r.stdout) != "hi" {
		t.Fatalf("the session read the workspace's secret key, or cat did not fail as in the box: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// With a terminal (-tt: ssh asks for one without having one itself), and its exit status.
	r = opal.run(append(append([]string{"compute", "connect-ssh", "ssh1", "--", "-tt"}, sshArgs...), "tty; exit 7")...)
	if r.code != 7 || !strings.Contains(r.stdout, "/dev/pts/") {
		t.Fatalf("a session with a terminal: exit %d, want 7\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if show := opal.ok("compute", "show", "ssh1").stdout; !strings.Contains(show, w.instance("ssh1").SSHHostKey) ||
		!strings.Contains(show, "running: hangar compute connect-ssh ssh1") {
		t.Fatalf("compute show lacks how to connect and the host key:\n%s", show)
	}
	known := readFile(t, filepath.Join(opalConfig(opal), "hangar", "ssh_known_hosts"))
	if !strings.Contains(known, "hangar-instance-ssh1 "+w.instance("ssh1").SSHHostKey) {
		t.Fatalf("known hosts %q lacks the instance's pinned host key", known)
	}

	// scp, through the same ProxyCommand and pinned key: up, then back.
	local := filepath.Join(dir, "up.txt")
	writeFiles(t, dir, map[string]string{"up.txt": "uploaded through hangar\n"})
	scpArgs := append(append([]string{}, sshArgs...),
		"-o", "ProxyCommand="+hangarBin+" compute connect-ssh ssh1 --stdio",
		"-o", "UserKnownHostsFile="+filepath.Join(opalConfig(opal), "hangar", "ssh_known_hosts"),
		"-o", "HostKeyAlias=hangar-instance-ssh1", "-o", "StrictHostKeyChecking=yes")
	opal.tool("scp", append(scpArgs, local, "ssh1@hangar-instance-ssh1:up.txt")...)
	back := filepath.Join(dir, "back.txt")
	opal.tool("scp", append(scpArgs, "ssh1@hangar-instance-ssh1:up.txt", back)...)
	if got := readFile(t, back); got != "uploaded through hangar\n" {
		t.Fatalf("scp back: %q", got)
	}

	// An open session counts as an SSH session for idleness; once closed, it no longer does.
	testwait.Within(t, time.Minute, "compute show to say no SSH session", func() bool {
		return strings.Contains(w.instance("ssh1").Idle, "no SSH session")
	})
	open := exec.Command(hangarBin, append(append([]string{"compute", "connect-ssh", "ssh1", "--"}, sshArgs...), "sleep 300")...)
	open.Env = opal.env
	open.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var openErr bytes.Buffer
	open.Stderr = &openErr
	if err := open.Start(); err != nil {
		t.Fatal(err)
	}
	go open.Wait()
	t.Cleanup(func() { _ = syscall.Kill(-open.Process.Pid, syscall.SIGKILL) })
	// (At least one: the idle judge also counts the machine's sshd sessions, which other
	// packages' tests may open meanwhile; the agent's own count is TestSSHSessionsCountAsActivity's.)
	sessions := regexp.MustCompile(`^busy:.*\b[1-9][0-9]* SSH sessions?\b`)
	testwait.Within(t, time.Minute, "compute show to count the open SSH session", func() bool {
		return sessions.MatchString(w.instance("ssh1").Idle)
	})
	_ = syscall.Kill(-open.Process.Pid, syscall.SIGKILL)
	testwait.Within(t, time.Minute, "the closed session to end on the node and no longer count", func() bool {
		return strings.Contains(w.instance("ssh1").Idle, "no SSH session") && len(processesWith("sleep 300")) == 0
	})

	// Another user, and no token, are refused by the server; ssh fails with the reason.
	rita := remoteUser{t: t, env: append(w.env(), "HANGAR_URL="+si.URL, "HANGAR_TOKEN="+tokens["rita"], "XDG_CONFIG_HOME="+t.TempDir())}
	rita.ok("--trust-fingerprint", fp, "compute", "show", "ssh1")
	r = rita.run(append(append([]string{"compute", "connect-ssh", "ssh1", "--"}, sshArgs...), "echo in")...)
	if r.code == 0 || strings.Contains(r.stdout, "in") || !strings.Contains(r.stderr, "may not connect to compute instance ssh1") {
		t.Fatalf("another reader's connect-ssh: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	hc := w.client().HTTPClient()
	sshUpgradeCall(t, hc, si.URL+"/instances/ssh1/ssh", tokens["rita"], http.StatusForbidden)
	sshUpgradeCall(t, hc, si.URL+"/instances/ssh1/ssh", "", http.StatusUnauthorized)

	w.ok("compute", "stop", "ssh1")
	w.waitInstance("ssh1", 2*time.Minute, "Stopped")
	r = opal.run("compute", "connect-ssh", "ssh1")
	if r.code != 1 || !strings.Contains(r.stderr, "not running: the instance is Stopped") {
		t.Fatalf("connect-ssh to a stopped instance: exit %d\nstderr: %s", r.code, r.stderr)
	}
}

// opalConfig is a remote user's XDG_CONFIG_HOME.
func opalConfig(u remoteUser) string {
	for _, kv := range u.env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			return v
		}
	}
	return ""
}

// tool runs an OpenSSH tool as the user and fails the test unless it exits 0.
func (u remoteUser) tool(name string, args ...string) {
	u.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = u.env
	if out, err := cmd.CombinedOutput(); err != nil {
		u.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// sshUpgradeCall asks the SSH route for an upgrade as a token ("" none) and checks the status.
func sshUpgradeCall(t *testing.T, hc *http.Client, url, token string, want int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "hangar-ssh")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("GET %s as %q: %d, want %d", url, token, resp.StatusCode, want)
	}
}
