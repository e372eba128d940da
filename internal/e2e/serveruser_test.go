package e2e

import (
	"os"
	osuser "os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// serverUserEnv, when set (to a user name), starts every workspace's server as that user instead
// of the test's own (root in CI): its supervisors and runs then run as that user too, the way a
// server run by an unprivileged account works. scripts/test.sh runs the security tests a second
// time so (with the account scripts/setup/sandbox.sh makes).
const serverUserEnv = "HANGAR_E2E_SERVER_USER"

// serverAccount is an account a workspace's server runs as.
type serverAccount struct {
	uid, gid uint32
	home     string
	name     string
}

// serverUser is the account the servers run as; nil: the test's own.
func serverUser(t testing.TB) *serverAccount {
	t.Helper()
	name := os.Getenv(serverUserEnv)
	if name == "" {
		return nil
	}
	u, err := osuser.Lookup(name)
	if err != nil {
		t.Fatalf("%s=%s: %v", serverUserEnv, name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &serverAccount{uid: uint32(uid), gid: uint32(gid), home: u.HomeDir, name: u.Username}
}

// prepareHome gives the workspace's home to the server's account and opens the folders above it
// for that account to reach (a test's temporary directories are root's, 0700).
func (a *serverAccount) prepareHome(t testing.TB, home string) {
	t.Helper()
	if err := os.Chmod(filepath.Dir(home), 0o755); err != nil {
		t.Fatal(err)
	}
	err := filepath.Walk(home, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(a.uid), int(a.gid))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// credential is what the server process runs with.
func (a *serverAccount) credential() *syscall.Credential {
	return &syscall.Credential{Uid: a.uid, Gid: a.gid}
}

// env is the account's HOME and USER, for the server's environment.
func (a *serverAccount) env() []string {
	return []string{"HOME=" + a.home, "USER=" + a.name, "LOGNAME=" + a.name}
}

// openBinary lets the server's account run the binary under test.
func openBinary() error {
	if os.Getenv(serverUserEnv) == "" {
		return nil
	}
	return os.Chmod(filepath.Dir(hangarBin), 0o755)
}
