// Package sshtest starts a real OpenSSH sshd (Debian's /usr/sbin/sshd) for integration tests: on a
// free 127.0.0.1 port, or inside a network namespace of its own whose link can be cut and restored.
//
// The config, keys and log live in t.TempDir(); the system's /etc/ssh is not read. Logins: root with
// a generated ed25519 key (PermitRootLogin prohibit-password), and with Options.Password a throwaway
// user with a password. Without sshd or root the test is skipped, or fails when CI is set.
//
// The link cut (Options.NetNS): sshd runs under nsenter in a namespace "hgt-<id>" joined to this one
// by a veth pair on a random 10.213.x.y/30; CutLink sets the namespace's end down, which drops
// packets silently both ways (new connects time out, open connections stall until keepalives give
// up), and RestoreLink sets it up again. Tested on the Debian 12 / kernel 6.18 test bed as root.
// Cleanup kills every process in the namespace, deletes it and the veth pair.
package sshtest

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHD is the server binary (Debian's openssh-server; scripts/setup/sshd.sh --install installs it).
const SSHD = "/usr/sbin/sshd"

// Options choose what Start sets up.
type Options struct {
	// NetNS runs sshd in a new network namespace, reached over a veth pair at its own 10.x.y.z
	// address on port 22, so that CutLink can take the link away. Needs root, ip and nsenter.
	NetNS bool
	// Password creates a throwaway non-root user with a home in /home and a random password (both
	// removed at cleanup) and turns on password login; see Server.TestUser. That user also logs in
	// with KeyFile, which makes it the account for tests that write into a home directory.
	Password bool
	// ExtraHostKey gives sshd a second host key, ECDSA, which golang.org/x/crypto/ssh would pick
	// by default, and which KnownHosts and HostKey do not show: a host with several keys, of which
	// the client knows one.
	ExtraHostKey bool
	// SetEnv are "NAME=value" variables every session gets (sshd's SetEnv), as a machine's own
	// configuration would give them (CONTAINERS_CONF for the test bed's podman, say).
	SetEnv []string
}

// Server is a running sshd. Its processes, user and namespace go away at the end of the test.
type Server struct {
	Host string
	Port int
	// Gateway is, with Options.NetNS, this machine's own address on the namespace's link: what the
	// "remote" host reaches of this one (a service a test starts there listens on it).
	Gateway string
	// User logs in with KeyFile (root: the harness needs root, and sshd allows root keys only).
	User    string
	KeyFile string
	// TestUser and Password are set with Options.Password.
	TestUser string
	Password string
	// KnownHosts lists the current host key for Addr, in OpenSSH known_hosts form.
	KnownHosts string
	// Dir holds the config, keys and sshd.log.
	Dir string

	cmd          *exec.Cmd
	exited       chan struct{}
	hostKey      ssh.PublicKey
	extraHostKey bool
	setEnv       []string
	netns        string // namespace name, "" without NetNS
	vethNS       string // the namespace's end of the veth pair
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// HostKey returns the current host key in authorized_keys form.
func (s *Server) HostKey() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.hostKey)))
}

// Log returns what sshd logged so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "sshd.log"))
	return string(b)
}

// Require skips the test when sshd cannot run here (no sshd binary, not root, or with netns no ip or
// nsenter); with the environment variable CI set it fails instead, so CI never skips silently.
func Require(t testing.TB, opts Options) {
	t.Helper()
	var missing []string
	if _, err := os.Stat(SSHD); err != nil {
		missing = append(missing, SSHD+" (bash scripts/setup/sshd.sh --install)")
	}
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	if opts.NetNS {
		for _, tool := range []string{"ip", "nsenter"} {
			if _, err := exec.LookPath(tool); err != nil {
				missing = append(missing, tool)
			}
		}
	}
	if opts.Password {
		for _, tool := range []string{"useradd", "userdel", "chpasswd"} {
			if _, err := exec.LookPath(tool); err != nil {
				missing = append(missing, tool)
			}
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := "sshd integration test needs " + strings.Join(missing, ", ")
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: integration tests must not skip)")
	}
	t.Skip(msg)
}

// Start starts sshd with a generated config in t.TempDir() and stops it at cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	Require(t, opts)
	s := &Server{Dir: t.TempDir(), User: "root", Host: "127.0.0.1", extraHostKey: opts.ExtraHostKey, setEnv: opts.SetEnv}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege separation directory
		t.Fatal(err)
	}
	s.KeyFile = filepath.Join(s.Dir, "client_key")
	clientPub := WriteKey(t, s.KeyFile)
	// sshd reads authorized_keys as the user logging in: let every user reach it (not list the directory).
	writeFile(t, filepath.Join(s.Dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientPub), 0o644)
	for _, d := range []string{s.Dir, filepath.Dir(s.Dir)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	s.newHostKey(t)
	if opts.ExtraHostKey {
		writeECDSAKey(t, filepath.Join(s.Dir, "hostkey_ecdsa"))
	}
	t.Cleanup(s.stop)
	if opts.Password {
		s.addTestUser(t)
	}
	if opts.NetNS {
		s.setupNetNS(t)
		s.Port = 22
	}
	for attempt := 0; ; attempt++ {
		if !opts.NetNS {
			s.Port = freePort(t)
		}
		err := s.start(t)
		if err == nil {
			break
		}
		if attempt == 4 || !strings.Contains(s.Log(), "Address already in use") {
			t.Fatalf("start sshd: %v\n%s", err, s.Log())
		}
	}
	s.writeKnownHosts(t)
	return s
}

// Restart stops sshd and starts it again on the same address; with newHostKey it first replaces the
// host key (as a reinstalled host would). KnownHosts is rewritten with the current key, so keep a
// copy of the file to test a changed key. Open connections are not affected.
func (s *Server) Restart(t testing.TB, newHostKey bool) {
	t.Helper()
	s.stopListener()
	if newHostKey {
		s.newHostKey(t)
	}
	if err := s.start(t); err != nil {
		t.Fatalf("restart sshd: %v\n%s", err, s.Log())
	}
	s.writeKnownHosts(t)
}

// CutLink makes the host unreachable without telling either side: the namespace's end of the veth
// pair goes down, so packets to and from it are dropped (connects time out, open connections stall),
// as in a network partition. Only with Options.NetNS.
func (s *Server) CutLink(t testing.TB) {
	t.Helper()
	s.linkSet(t, "down")
}

// RestoreLink brings the link back after CutLink and returns once sshd answers through it (the
// first packets after a cut can take a moment: neighbour discovery starts over).
func (s *Server) RestoreLink(t testing.TB) {
	t.Helper()
	s.linkSet(t, "up")
	start := time.Now()
	for !banner(s.Addr()) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("sshtest: %s does not answer 10s after RestoreLink", s.Addr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := time.Since(start); d > time.Second {
		t.Logf("sshtest: link back after %s", d.Round(time.Millisecond))
	}
}

func (s *Server) linkSet(t testing.TB, state string) {
	if s.netns == "" {
		t.Fatal("sshtest: CutLink and RestoreLink need Options.NetNS")
	}
	run(t, "ip", "-n", s.netns, "link", "set", s.vethNS, state)
}

var configTemplate = template.Must(template.New("sshd_config").Parse(`# written by sshtest; the system's /etc/ssh is not read
ListenAddress {{.Addr}}
HostKey {{.Dir}}/hostkey
{{if .Extra}}HostKey {{.Dir}}/hostkey_ecdsa
{{end}}PidFile none
AuthorizedKeysFile {{.Dir}}/authorized_keys
# the keys live under t.TempDir(), below the world-writable /tmp
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication {{if .Password}}yes{{else}}no{{end}}
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowTcpForwarding yes
# a client that vanished (a cut link) is dropped after about 3 s, freeing its remote forwards
ClientAliveInterval 1
ClientAliveCountMax 3
MaxSessions 20
UseDNS no
PrintMotd no
LogLevel VERBOSE
Subsystem sftp internal-sftp
{{range .SetEnv}}SetEnv {{printf "%q" .}}
{{end}}`))

func (s *Server) start(t testing.TB) error {
	var cfg bytes.Buffer
	configTemplate.Execute(&cfg, map[string]any{"Addr": s.Addr(), "Dir": s.Dir, "Password": s.Password != "", "Extra": s.extraHostKey, "SetEnv": s.setEnv})
	cfgPath := filepath.Join(s.Dir, "sshd_config")
	writeFile(t, cfgPath, cfg.Bytes(), 0o600)
	logPath := filepath.Join(s.Dir, "sshd.log")
	os.Remove(logPath)
	argv := []string{SSHD, "-D", "-f", cfgPath, "-E", logPath}
	if s.netns != "" {
		argv = append([]string{"nsenter", "--net=/run/netns/" + s.netns}, argv...)
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(s.cmd, s.exited)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("sshd exited: %v", s.cmd.ProcessState)
		default:
		}
		if banner(s.Addr()) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stopListener()
	return fmt.Errorf("sshd did not answer on %s within 10s", s.Addr())
}

// banner reports whether an SSH server answers on addr.
func banner(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.HasPrefix(line, "SSH-")
}

// stopListener stops the listening sshd and the per-connection processes it forked.
func (s *Server) stopListener() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	pid := s.cmd.Process.Pid
	children := childrenOf(pid)
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	for _, c := range children {
		syscall.Kill(c, syscall.SIGTERM)
	}
	s.cmd = nil
}

func (s *Server) stop() {
	s.stopListener()
	if s.netns != "" {
		// Everything started through this sshd (sessions, detached processes) lives in the namespace.
		out, _ := exec.Command("ip", "netns", "pids", s.netns).Output()
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		exec.Command("ip", "netns", "del", s.netns).Run()
		exec.Command("ip", "link", "del", "hgt"+s.netns[4:]+"h").Run()
	}
	if s.TestUser != "" {
		s.removeTestUser()
	}
}

// removeTestUser kills what the throwaway user still runs (sessions ending, detached test processes,
// a rootless podman's pause process left by `podman info`), then deletes the user and its home.
func (s *Server) removeTestUser() {
	u, err := user.Lookup(s.TestUser)
	if err != nil {
		return
	}
	for i := 0; i < 50; i++ {
		pids := processesOf(u.Uid)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := 0; i < 20; i++ { // userdel fails while another process holds /etc/passwd's lock
		if out, err := exec.Command("userdel", "-r", s.TestUser).CombinedOutput(); err == nil || !strings.Contains(string(out), "lock") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesOf returns the pids whose real uid is uid.
func processesOf(uid string) []int {
	return pidsWhere("status", func(status string) bool {
		for _, l := range strings.Split(status, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" && f[1] == uid {
				return true
			}
		}
		return false
	})
}

// pidsWhere returns the pids whose /proc/<pid>/<file> keep accepts.
func pidsWhere(file string, keep func(content string) bool) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/" + file); err == nil && keep(string(b)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (s *Server) newHostKey(t testing.TB) {
	s.hostKey = WriteKey(t, filepath.Join(s.Dir, "hostkey"))
}

func (s *Server) writeKnownHosts(t testing.TB) {
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	writeFile(t, s.KnownHosts, []byte(knownhosts.Line([]string{s.Addr()}, s.hostKey)+"\n"), 0o644)
}

// addTestUser creates a user (home in /home) with a random password, removed with its home at
// cleanup. The temporary directory is root's only, so the home cannot live there.
func (s *Server) addTestUser(t testing.TB) {
	s.TestUser = "hgt" + randHex(4)
	s.Password = randHex(12)
	var err error
	for i := 0; i < 20; i++ { // useradd fails while another process holds /etc/passwd's lock
		var out []byte
		out, err = exec.Command("useradd", "-m", "-s", "/bin/bash", s.TestUser).CombinedOutput()
		if err == nil {
			break
		}
		err = fmt.Errorf("%v: %s", err, out)
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("useradd: %v", err)
	}
	cmd := exec.Command("chpasswd")
	cmd.Stdin = strings.NewReader(s.TestUser + ":" + s.Password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd: %v: %s", err, out)
	}
}

// setupNetNS creates a namespace with a veth pair on a free 10.213.x.y/30 and points Host at its end.
func (s *Server) setupNetNS(t testing.TB) {
	id := randHex(3)
	s.netns = "hgt-" + id // set first: stop removes whatever part of the setup was made
	vethHost, vethNS := "hgt"+id+"h", "hgt"+id+"n"
	s.vethNS = vethNS
	hostIP, nsIP := freeSubnet(t)
	run(t, "ip", "netns", "add", s.netns)
	run(t, "ip", "link", "add", vethHost, "type", "veth", "peer", "name", vethNS)
	run(t, "ip", "link", "set", vethNS, "netns", s.netns)
	run(t, "ip", "addr", "add", hostIP+"/30", "dev", vethHost)
	run(t, "ip", "link", "set", vethHost, "up")
	run(t, "ip", "-n", s.netns, "addr", "add", nsIP+"/30", "dev", vethNS)
	run(t, "ip", "-n", s.netns, "link", "set", vethNS, "up")
	run(t, "ip", "-n", s.netns, "link", "set", "lo", "up")
	s.Host, s.Gateway = nsIP, hostIP
}

// freeSubnet picks a /30 in 10.213.0.0/16 that no interface uses and returns its two addresses.
func freeSubnet(t testing.TB) (hostIP, nsIP string) {
	addrs, _ := net.InterfaceAddrs()
	for i := 0; i < 100; i++ {
		b := make([]byte, 2)
		rand.Read(b)
		b[1] &^= 3
		base := net.IPv4(10, 213, b[0], b[1])
		taken := false
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && (n.Contains(base) || (&net.IPNet{IP: base, Mask: net.CIDRMask(30, 32)}).Contains(n.IP)) {
				taken = true
			}
		}
		if !taken {
			return net.IPv4(10, 213, b[0], b[1]+1).String(), net.IPv4(10, 213, b[0], b[1]+2).String()
		}
	}
	t.Fatal("sshtest: no free /30 in 10.213.0.0/16")
	return "", ""
}

// WriteKey writes a new ed25519 private key to path (OpenSSH format, 0600) and its public key to
// path.pub, and returns the public key: a client key, or a "wrong key" for tests.
func WriteKey(t testing.TB, path string) ssh.PublicKey {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	writePrivateKey(t, path, priv)
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path+".pub", ssh.MarshalAuthorizedKey(sp), 0o644)
	return sp
}

func writeECDSAKey(t testing.TB, path string) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	writePrivateKey(t, path, priv)
}

// writePrivateKey writes priv to path in OpenSSH's PEM form, readable by its owner only.
func writePrivateKey(t testing.TB, path string, priv crypto.PrivateKey) {
	t.Helper()
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, pem.EncodeToMemory(block), 0o600)
}

func writeFile(t testing.TB, path string, data []byte, mode os.FileMode) {
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

func run(t testing.TB, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// childrenOf returns the pids whose parent is pid.
func childrenOf(pid int) []int {
	return pidsWhere("stat", func(s string) bool {
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			return false
		}
		f := strings.Fields(s[i+1:])
		return len(f) > 1 && f[1] == strconv.Itoa(pid)
	})
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
