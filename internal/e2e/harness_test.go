package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store/pgtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// hangarBin is the binary under test, built once by TestMain.
var hangarBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hangar-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hangarBin = filepath.Join(dir, "hangar")
	build := exec.Command("go", "build", "-o", hangarBin, "github.com/hangar-ml/hangar/cmd/hangar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build hangar:", err)
		os.Exit(1)
	}
	if err := openBinary(); err != nil { // serveruser_test.go
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// storeEnv selects the workspaces' database: HANGAR_E2E_STORE=postgres gives each workspace a
// PostgreSQL database of its own (through pgtest's admin URL) instead of its SQLite file.
const storeEnv = "HANGAR_E2E_STORE"

func onPostgres(t testing.TB) bool {
	t.Helper()
	return pgtest.Selected(t, storeEnv)
}

// ws is a workspace in a temporary HANGAR_HOME with its own server.
type ws struct {
	t      testing.TB
	home   string
	server *exec.Cmd
	// serverArgs are extra flags for `hangar server`.
	serverArgs []string
	// extraEnv is added to the environment of the server and the CLI.
	extraEnv []string
	// account runs the server when HANGAR_E2E_SERVER_USER says so (serveruser_test.go).
	account *serverAccount
}

// newWS starts a workspace server with short timings suited to tests.
func newWS(t testing.TB, serverArgs ...string) *ws {
	t.Helper()
	return newWSEnv(t, nil, serverArgs...)
}

// newWSEnv is newWS with extra environment variables for the server (and so its runs) and the CLI.
func newWSEnv(t testing.TB, env []string, serverArgs ...string) *ws {
	t.Helper()
	if onPostgres(t) {
		env = append(env, home.DatabaseEnv+"="+pgtest.NewDatabase(t))
	}
	w := &ws{t: t, home: t.TempDir(), extraEnv: env, account: serverUser(t),
		serverArgs: append([]string{"--cancel-grace", "2s", "--heartbeat", "1s"}, serverArgs...)}
	if w.account != nil {
		w.account.prepareHome(t, w.home)
	}
	w.startServer()
	t.Cleanup(w.cleanup)
	return w
}

func (w *ws) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HANGAR_") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, w.extraEnv...), "HANGAR_HOME="+w.home)
}

// envValue is the value of k in the workspace's extra environment ("" when not there).
func (w *ws) envValue(k string) string {
	for _, kv := range w.extraEnv {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v
		}
	}
	return ""
}

// dsn is what store.Open takes for the workspace's database: its PostgreSQL URL when the
// workspace runs on one (HANGAR_E2E_STORE=postgres), else its SQLite file.
func (w *ws) dsn() string {
	if v := w.envValue(home.DatabaseEnv); v != "" {
		return v
	}
	return filepath.Join(w.home, "workspace.db")
}

// startServer starts `hangar server` for the workspace and waits until it answers.
func (w *ws) startServer() {
	w.t.Helper()
	logf, err := os.OpenFile(filepath.Join(w.home, "test-server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		w.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(hangarBin, append([]string{"server", "--home", w.home}, w.serverArgs...)...)
	cmd.Env = w.env()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if w.account != nil {
		cmd.Env = append(cmd.Env, w.account.env()...)
		cmd.SysProcAttr.Credential = w.account.credential()
		_ = os.Lchown(logf.Name(), int(w.account.uid), int(w.account.gid))
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go cmd.Wait()
	w.server = cmd
	h := home.Home{Dir: w.home}
	testwait.Within(w.t, 20*time.Second, "server to answer", func() bool {
		si, err := h.Running(context.Background())
		return err == nil && si.PID == cmd.Process.Pid
	})
}

// killServer kills the server with SIGKILL, as a crash would.
func (w *ws) killServer() {
	w.t.Helper()
	if err := w.server.Process.Signal(syscall.SIGKILL); err != nil {
		w.t.Fatal(err)
	}
	testwait.Within(w.t, 10*time.Second, "server to die", func() bool { return syscall.Kill(w.server.Process.Pid, 0) != nil })
}

// cleanup cancels every supervisor still running and stops the server, so temp dirs can go. When
// the test failed it shows the end of the server's log.
func (w *ws) cleanup() {
	if w.t.Failed() {
		b, _ := os.ReadFile(filepath.Join(w.home, "test-server.log"))
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, "level=DEBUG msg=http") {
				keep = append(keep, l)
			}
		}
		if len(keep) > 60 {
			keep = keep[len(keep)-60:]
		}
		w.t.Logf("server log (end):\n%s", strings.Join(keep, "\n"))
	}
	stopSupervisors(filepath.Join(w.home, "local", "runs"))
	if w.server != nil && w.server.Process != nil {
		_ = w.server.Process.Signal(syscall.SIGTERM)
	}
	if w.server != nil && w.server.Process != nil {
		_ = w.server.Process.Signal(syscall.SIGKILL)
	}
	killMatching(w.home) // agents of local-provider clusters, and anything else the test started there
}

// killMatching kills the processes whose command line or working directory mentions dir (a test's
// own temporary directory, so nothing else matches), and their process groups.
func killMatching(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == self {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		if strings.Contains(string(cmd), dir) || strings.HasPrefix(cwd, dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// stopSupervisors sends SIGTERM to the supervisors of the runs under runsDir (their handle.json),
// waits a while for them to wrap up, then kills what is left.
func stopSupervisors(runsDir string) {
	dirs, _ := filepath.Glob(filepath.Join(runsDir, "*", "handle.json"))
	pids := map[int]string{} // pid → its run dir
	for _, f := range dirs {
		var h struct {
			PID  int `json:"pid"`
			Proc struct {
				PID int `json:"pid"`
			} `json:"proc"`
		}
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &h) == nil {
			pid := max(h.PID, h.Proc.PID)
			// Only this run's supervisor: pids are reused quickly on a busy machine, and a stale
			// pid may now belong to another test's process.
			if pid > 0 && ownsPID(pid, filepath.Dir(f)) && syscall.Kill(pid, syscall.SIGTERM) == nil {
				pids[pid] = filepath.Dir(f)
			}
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for pid, dir := range pids {
		testwait.Until(deadline, func() bool { return !ownsPID(pid, dir) || zombie(pid) })
		if ownsPID(pid, dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// ownsPID reports whether pid is the hangar supervisor of the run in dir.
func ownsPID(pid int, dir string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	cmd := string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
	return strings.Contains(cmd, " supervise ") && strings.Contains(cmd, dir)
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs the CLI in the workspace, in dir when set.
func (w *ws) runIn(dir string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hangarBin, args...)
	cmd.Env = w.env()
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("run hangar %v: %v", args, err)
	}
	return r
}

func (w *ws) run(args ...string) result { w.t.Helper(); return w.runIn("", args...) }

// ok runs the CLI and fails the test unless it exits 0.
func (w *ws) ok(args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	if r.code != 0 {
		w.t.Fatalf("hangar %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// create submits a job file and returns the job's name.
func (w *ws) create(file string, extra ...string) string {
	w.t.Helper()
	r := w.ok(append([]string{"job", "create", "-f", file, "-o", "json"}, extra...)...)
	var d api.RunDetail
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		w.t.Fatalf("job create output: %v\n%s", err, r.stdout)
	}
	return d.ID
}

// show returns `job show -o json`.
func (w *ws) show(name string) api.RunDetail {
	w.t.Helper()
	r := w.ok("job", "show", "-n", name, "-o", "json")
	var d api.RunDetail
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		w.t.Fatalf("job show output: %v\n%s", err, r.stdout)
	}
	return d
}

// waitStatus polls until the job reaches one of the states.
func (w *ws) waitStatus(name string, timeout time.Duration, states ...job.State) api.RunDetail {
	w.t.Helper()
	var d api.RunDetail
	testwait.Within(w.t, timeout, fmt.Sprintf("job %s to be %v", name, states), func() bool {
		d = w.show(name)
		for _, s := range states {
			if d.Status == s {
				return true
			}
		}
		return false
	})
	return d
}

// writeFiles creates files under dir from a map of relative path → content.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logs returns the job's log lines stored so far.
func (w *ws) logs(name string) string {
	w.t.Helper()
	c := w.client()
	resp, err := c.Jobs.Logs(context.Background(), name, "", 0, 0)
	if err != nil {
		w.t.Fatalf("logs of %s: %v", name, err)
	}
	var b strings.Builder
	for _, l := range resp.Lines {
		b.WriteString(l.Text + "\n")
	}
	return b.String()
}

// client is an API client for the workspace: its server from the home, or HANGAR_URL and
// HANGAR_TOKEN when the workspace is used through them (a plain HTTP address).
func (w *ws) client() *api.Client {
	if u := w.envValue("HANGAR_URL"); u != "" {
		return api.NewClient(u, w.envValue("HANGAR_TOKEN"))
	}
	h := home.Home{Dir: w.home}
	si, err := h.ReadServerInfo()
	if err != nil {
		w.t.Fatal(err)
	}
	tok, err := h.ReadToken()
	if err != nil {
		w.t.Fatal(err)
	}
	c, err := si.Client(tok) // an https server's certificate, from the home
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}
