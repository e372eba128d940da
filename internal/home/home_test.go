package home

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
)

func newHome(t testing.TB) Home {
	t.Helper()
	h := Home{Dir: filepath.Join(t.TempDir(), "ws")}
	if err := h.Ensure(); err != nil {
		t.Fatal(err)
	}
	return h
}

func mode(t testing.TB, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestEnsure(t *testing.T) {
	h := newHome(t)
	if m := mode(t, h.Dir); m != 0o700 {
		t.Errorf("workspace directory mode %o, want 700", m)
	}
	if err := h.Ensure(); err != nil {
		t.Errorf("second Ensure: %v", err)
	}
}

func TestDefault(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HANGAR_HOME", "rel/ws")
	h, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "rel", "ws"); h.Dir != want {
		t.Errorf("Default with a relative HANGAR_HOME = %q, want %q", h.Dir, want)
	}
	t.Setenv("HANGAR_HOME", "")
	t.Setenv("HOME", dir)
	if h, err = Default(); err != nil || h.Dir != filepath.Join(dir, ".hangar") {
		t.Errorf("Default without HANGAR_HOME = %q, %v; want ~/.hangar", h.Dir, err)
	}
}

func TestServerInfoRoundTrip(t *testing.T) {
	h := newHome(t)
	if pid := h.ReadPID(); pid != 0 {
		t.Errorf("ReadPID without a pid file = %d, want 0", pid)
	}
	if _, err := h.ReadServerInfo(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadServerInfo without a file = %v, want not-exist", err)
	}
	want := ServerInfo{URL: "http://127.0.0.1:8765", PID: 4242, StartedAt: time.Date(2025, 5, 6, 7, 8, 9, 10, time.UTC)}
	if err := h.WriteServerInfo(want); err != nil {
		t.Fatal(err)
	}
	got, err := h.ReadServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("server info (-want +got):\n%s", diff)
	}
	if pid := h.ReadPID(); pid != 4242 {
		t.Errorf("ReadPID = %d, want 4242", pid)
	}
	if m := mode(t, h.ServerFile()); m != 0o600 {
		t.Errorf("server.json mode %o, want 600", m)
	}
	// Rewriting replaces both files; no temporary files stay behind.
	want.URL, want.PID = "http://127.0.0.1:9999", 7
	if err := h.WriteServerInfo(want); err != nil {
		t.Fatal(err)
	}
	if got, err := h.ReadServerInfo(); err != nil || got.URL != want.URL || h.ReadPID() != 7 {
		t.Errorf("after rewrite: %+v, %v, pid %d", got, err, h.ReadPID())
	}
	entries, err := os.ReadDir(h.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestReadCorruptFiles(t *testing.T) {
	h := newHome(t)
	if err := os.WriteFile(h.PIDFile(), []byte("not a pid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if pid := h.ReadPID(); pid != 0 {
		t.Errorf("ReadPID of garbage = %d, want 0", pid)
	}
	if err := os.WriteFile(h.ServerFile(), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ReadServerInfo(); err == nil || !strings.Contains(err.Error(), h.ServerFile()) {
		t.Errorf("ReadServerInfo of garbage = %v, want an error naming the file", err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	h := newHome(t)
	if err := h.WriteServerInfo(ServerInfo{URL: "http://x", PID: 31337}); err != nil {
		t.Fatal(err)
	}
	release, err := h.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if !h.locked() {
		t.Error("locked() = false while the lock is held")
	}
	if r2, err := h.Lock(); err == nil {
		r2()
		t.Fatal("a second Lock succeeded while the first is held")
	} else if !strings.Contains(err.Error(), "already running") || !strings.Contains(err.Error(), "pid 31337") {
		t.Errorf("second Lock error %q, want it to say a server runs and its pid", err)
	}
	release()
	release2, err := h.Lock()
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	release2()
	if h.locked() {
		t.Error("locked() = true after every lock was released")
	}
}

func TestEnsureToken(t *testing.T) {
	h := newHome(t)
	tok, err := h.EnsureToken()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := hex.DecodeString(tok); err != nil || len(b) != 32 {
		t.Errorf("token %q is not 32 random bytes in hex", tok)
	}
	if m := mode(t, h.TokenFile()); m != 0o600 {
		t.Errorf("token file mode %o, want 600", m)
	}
	again, err := h.EnsureToken()
	if err != nil || again != tok {
		t.Errorf("second EnsureToken = %q, %v; want the same token %q", again, err, tok)
	}
	if read, err := h.ReadToken(); err != nil || read != tok {
		t.Errorf("ReadToken = %q, %v", read, err)
	}
	other := newHome(t)
	if tok2, err := other.EnsureToken(); err != nil || tok2 == tok {
		t.Errorf("another workspace got token %q, %v", tok2, err)
	}
}

func TestEnsureTokenReplacesEmptyFile(t *testing.T) {
	h := newHome(t)
	if err := os.WriteFile(h.TokenFile(), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := h.EnsureToken()
	if err != nil || tok == "" {
		t.Fatalf("EnsureToken over an empty file = %q, %v", tok, err)
	}
	if m := mode(t, h.TokenFile()); m != 0o600 {
		t.Errorf("token file mode %o, want 600", m)
	}
}

// healthServer answers /api/health with pid.
func healthServer(t testing.TB, pid int) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/health" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(api.Health{OK: true, PID: pid})
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func TestRunning(t *testing.T) {
	h := newHome(t)
	if _, err := h.Running(t.Context()); err == nil {
		t.Error("Running without server.json succeeded")
	}
	url := healthServer(t, 1234)
	if err := h.WriteServerInfo(ServerInfo{URL: url, PID: 1234}); err != nil {
		t.Fatal(err)
	}
	si, err := h.Running(t.Context())
	if err != nil || si.URL != url {
		t.Errorf("Running = %+v, %v; want the server at %s", si, err, url)
	}
	// A server at the recorded address whose pid differs is another workspace's.
	if err := h.WriteServerInfo(ServerInfo{URL: url, PID: 99}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Running(t.Context()); err == nil || !strings.Contains(err.Error(), "another workspace") {
		t.Errorf("Running with a foreign server = %v, want an error about another workspace", err)
	}
}

// TestLockHelperProcess is not a test: run as a child process by TestStop, it holds the server
// lock of $HANGAR_TEST_LOCK_DIR until SIGTERM.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("HANGAR_TEST_LOCK_DIR")
	if dir == "" {
		return
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	release, err := Home{Dir: dir}.Lock()
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	<-sigs
	release()
	os.Exit(0)
}

func TestStop(t *testing.T) {
	h := newHome(t)
	if stopped, err := h.Stop(t.Context(), time.Second); stopped || err != nil {
		t.Errorf("Stop without a pid file = %v, %v; want false", stopped, err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "HANGAR_TEST_LOCK_DIR="+h.Dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	if err := os.WriteFile(h.PIDFile(), []byte(fmt.Sprintf("%d\n", cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	stopped, err := h.Stop(t.Context(), 10*time.Second)
	if err != nil || !stopped {
		t.Fatalf("Stop = %v, %v; want true", stopped, err)
	}
	if err := <-exited; err != nil {
		t.Errorf("the server did not exit cleanly on SIGTERM: %v", err)
	}
	exited <- nil // for the cleanup
	release, err := h.Lock()
	if err != nil {
		t.Fatalf("lock still held after Stop: %v", err)
	}
	release()
	// Its pid file is stale now: Stop says no server runs.
	if stopped, err := h.Stop(t.Context(), time.Second); stopped || err != nil {
		t.Errorf("Stop with a stale pid file = %v, %v; want false", stopped, err)
	}
}
