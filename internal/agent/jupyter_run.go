package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/runbox"
)

// jupyterReadyWithin bounds a Jupyter server's start: not answering by then, it is restarted.
const jupyterReadyWithin = 2 * time.Minute

// jupyterRun is one Jupyter server to keep running. key is its relay's (jupyter_relay.go):
// Jupyter itself has no token.
type jupyterRun struct {
	base, key     string
	root, runtime string // its root dir (notebooks) and its runtime dir (kernels' connection files)
	logFile       string
	hide          []string // what it must not see (runbox): only root and runtime are shown again
	log           *slog.Logger
}

// jupyterCommand is the command that runs Jupyter, from what the node has on its PATH:
// JupyterLab, else Notebook, else a bare Jupyter server; nil when it has none. Options are given
// for both the Notebook 6 (NotebookApp) and jupyter_server (ServerApp) applications: each ignores
// the other's. It listens on the Unix socket sock (0600) only, with no token and no password:
// the socket is its authentication (only the agent's user reaches it, through a directory runs
// do not see), so that no page of it holds a credential (jupyter_relay.go). Its XSRF check is
// off as it was when the token authenticated every request: the workspace server's proxy makes
// that check (the studio's cookie is SameSite=Strict, cross-site requests are refused).
func jupyterCommand(lookPath func(string) (string, error), base, sock, root string, root0 bool) []string {
	var argv []string
	for _, exe := range []string{"jupyter-lab", "jupyter-notebook", "jupyter-server"} {
		if p, err := lookPath(exe); err == nil {
			argv = []string{p}
			break
		}
	}
	if argv == nil {
		return nil
	}
	argv = append(argv, "--no-browser")
	opts := []string{"base_url=" + base, "sock=" + sock, "sock_mode=0600", "token=", "password=",
		"disable_check_xsrf=True", "allow_remote_access=True", "open_browser=False"}
	if root0 {
		opts = append(opts, "allow_root=True")
	}
	for _, app := range []string{"NotebookApp", "ServerApp"} {
		for _, o := range opts {
			argv = append(argv, "--"+app+"."+o)
		}
	}
	// jupyter_server 2 takes the token from its identity provider.
	return append(argv, "--IdentityProvider.token=", "--NotebookApp.notebook_dir="+root, "--ServerApp.root_dir="+root)
}

// jupyterSocket is the name of the socket Jupyter listens on in its runtime dir, which is its
// working directory: a Unix socket's path holds at most 107 bytes, and a work dir's can be longer.
const jupyterSocket = "jupyter.sock"

// once starts Jupyter, reports it starting then running, and returns once it exited (the
// report to make of that) or ctx ended (it is stopped, its kernels with it).
func (r jupyterRun) once(ctx context.Context, serverURL string, set func(*api.JupyterReport)) *api.JupyterReport {
	failed := func(format string, a ...any) *api.JupyterReport {
		return &api.JupyterReport{State: api.JupyterFailed, Reason: fmt.Sprintf(format, a...)}
	}
	ip, err := node.AddressToward(api.FirstURL(serverURL))
	if err != nil {
		return failed("%v", err)
	}
	argv := jupyterCommand(exec.LookPath, r.base, jupyterSocket, r.root, os.Geteuid() == 0)
	if argv == nil {
		return &api.JupyterReport{State: api.JupyterNotInstalled, Reason: "no jupyter-lab, jupyter-notebook or jupyter-server on the node's PATH"}
	}
	for _, d := range []string{r.root, r.runtime} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return failed("%v", err)
		}
	}
	if err := os.Chmod(r.runtime, 0o700); err != nil { // made by an earlier version, maybe wider
		return failed("%v", err)
	}
	if err := os.Remove(filepath.Join(r.runtime, jupyterSocket)); err != nil && !errors.Is(err, os.ErrNotExist) { // a stale one
		return failed("%v", err)
	}
	sock, err := openShortSocket(r.runtime, jupyterSocket)
	if err != nil {
		return failed("%v", err)
	}
	defer sock.close()
	relay, err := newJupyterRelay(ip, sock.path(), r.key, r.log)
	if err != nil {
		return failed("no port for Jupyter's relay on %s: %v", ip, err)
	}
	defer relay.close()
	logf, err := os.OpenFile(r.logFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return failed("%v", err)
	}
	defer logf.Close()
	// Notebook kernels run code as the agent's user, as runs do, so Jupyter is boxed as a run is:
	// the agent's work dir and the workspace's home hidden (a kernel must not read the agent's
	// token or the workspace's secret key), its cgroup ended with it.
	box, err := r.openBox(ctx)
	if err != nil {
		return failed("%v", err)
	}
	defer box.End(context.WithoutCancel(ctx))
	env := append(append(scrubbedJupyterEnv(os.Environ()), "JUPYTER_RUNTIME_DIR="+r.runtime), box.UserEnv(r.root)...)
	cmd := box.Command(false, r.runtime, env, argv[0], argv[1:]...) // its socket is named from there
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (stopped as one; Command sets it), ended with the agent should the
	// agent be killed.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	if cmd, err = box.Start(cmd); err != nil {
		return failed("start %s: %v", filepath.Base(argv[0]), err)
	}
	if err := box.Started(cmd); err != nil {
		r.log.Warn("jupyter: not in its cgroup", "err", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	addr := relay.addr()
	set(&api.JupyterReport{State: api.JupyterStarting, Addr: addr})
	return r.watch(ctx, cmd, exited, addr, sock.path(), set)
}

// watch reports Jupyter running once it answers, and waits for its end or ctx's.
func (r jupyterRun) watch(ctx context.Context, cmd *exec.Cmd, exited chan error, addr, sock string, set func(*api.JupyterReport)) *api.JupyterReport {
	ready := time.Now().Add(jupyterReadyWithin)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	up := false
	for {
		select {
		case <-ctx.Done():
			r.kill(cmd, exited)
			return nil
		case err := <-exited:
			r.killKernels()
			return &api.JupyterReport{State: api.JupyterFailed, Reason: r.exitReason(err)}
		case <-tick.C:
		}
		if up {
			continue
		}
		if r.answers(ctx, sock) {
			up = true
			set(&api.JupyterReport{State: api.JupyterRunning, Addr: addr, Token: r.key})
		} else if time.Now().After(ready) {
			r.kill(cmd, exited)
			return &api.JupyterReport{State: api.JupyterFailed, Reason: fmt.Sprintf("did not answer on %s within %s",
				filepath.Join(r.runtime, jupyterSocket), jupyterReadyWithin)}
		}
	}
}

// answers says whether Jupyter answers its status API on its socket.
func (r jupyterRun) answers(ctx context.Context, sock string) bool {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, "http://jupyter"+r.base+"api/status", nil)
	if err != nil {
		return false
	}
	t := unixTransport(sock)
	defer t.CloseIdleConnections()
	resp, err := t.RoundTrip(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// kill stops Jupyter's process group (SIGTERM: it shuts its kernels down), then anything left.
func (r jupyterRun) kill(cmd *exec.Cmd, exited chan error) {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // what it left in its group
	r.killKernels()
}

// killKernels kills the kernels Jupyter started and left (they run in sessions of their own):
// those whose connection file is in its runtime dir.
func (r jupyterRun) killKernels() {
	for _, pid := range kernelsIn("/proc", r.runtime+string(filepath.Separator)) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// kernelsIn lists the Jupyter kernels among proc's processes with an argument under dir.
func kernelsIn(proc, dir string) []int {
	var out []int
	entries, _ := os.ReadDir(proc)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join(proc, e.Name(), "cmdline"))
		if err != nil || len(cmd) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		if !isKernel(args) {
			continue
		}
		for _, a := range args {
			if strings.HasPrefix(a, dir) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// exitReason is why Jupyter exited: its status and the last lines of its log, the token redacted.
func (r jupyterRun) exitReason(err error) string {
	reason := "exited"
	if err != nil {
		reason = err.Error()
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return reason
	}
	data, _ := os.ReadFile(r.logFile)
	return reason + lastLines(redact(string(data), r.key), 3)
}

func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "<token>")
}

// lastLines is ": " and the last n non-empty lines of s, joined with " | ", or "".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	lines = lines[max(0, len(lines)-n):]
	out := ": " + strings.Join(lines, " | ")
	if len(out) > 600 {
		out = out[:600] + "…"
	}
	return out
}

// openBox is Jupyter's run box: sandboxed as the node's runs are (HANGAR_SANDBOX), showing only
// its notebooks and runtime directories of what it hides.
func (r jupyterRun) openBox(ctx context.Context) (*runbox.Box, error) {
	mode, err := runbox.ParseMode(os.Getenv(runbox.ModeEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", runbox.ModeEnv, err)
	}
	o := runbox.Options{RunID: "jupyter", Dir: r.root, Hide: r.hide, Share: []string{r.root, r.runtime}, Sandbox: mode}
	if mode != runbox.SandboxOff { // its kernels run what the instance's user writes: as a run does
		if o.User, err = runbox.RunUser(os.Getenv(runbox.RunUserEnv), os.Geteuid()); err != nil {
			return nil, err
		}
	}
	box, warnings, err := runbox.Open(ctx, o)
	for _, w := range warnings {
		r.log.Warn("jupyter: " + w)
	}
	if err != nil {
		return nil, fmt.Errorf("jupyter's sandbox: %w", err)
	}
	if err := runbox.Chown(box.User(), r.root, r.runtime); err != nil { // its notebooks, its socket's folder
		box.End(ctx)
		return nil, err
	}
	return box, nil
}

// scrubbedEnv is the agent's environment without Hangar's own variables (a join token, the
// server's address and certificate): a notebook needs none of them.
func scrubbedEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HANGAR_") {
			out = append(out, kv)
		}
	}
	return out
}

// scrubbedJupyterEnv is scrubbedEnv without a Jupyter token the agent's environment may hold:
// Jupyter runs with none.
func scrubbedJupyterEnv(env []string) []string {
	out := scrubbedEnv(env)
	return slices.DeleteFunc(out, func(kv string) bool {
		return strings.HasPrefix(kv, "JUPYTER_TOKEN=") || strings.HasPrefix(kv, "JUPYTER_TOKEN_FILE=")
	})
}
