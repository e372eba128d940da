package objtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tool finds a store's binary from its variable; without it the test skips, or fails under CI.
func tool(t testing.TB, env, what string) string {
	t.Helper()
	p := os.Getenv(env)
	if p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("%s is not installed ($%s=%q; run bash scripts/setup/objstores.sh and export what it prints)", what, env, p)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// servers are the stores started by this test binary, by kind and address; they live as long as
// the binary does (Pdeathsig, from a thread that never exits).
var (
	mu      sync.Mutex
	servers = map[string]any{}
	starts  = make(chan startReq)
	once    sync.Once
)

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

// start runs cmd as a child that dies with the test binary. Linux sends the parent-death signal
// when the thread that forked exits, so every child is forked from one locked thread that lives
// as long as the process.
func start(cmd *exec.Cmd) (exited <-chan struct{}, err error) {
	once.Do(func() {
		go func() {
			runtime.LockOSThread()
			for r := range starts {
				r.done <- r.cmd.Start()
			}
		}()
	})
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	r := startReq{cmd: cmd, done: make(chan error)}
	starts <- r
	if err := <-r.done; err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	return done, nil
}

// scratch is this binary's folder for the stores' data and logs; those of binaries that are gone
// are removed first.
func scratch() (string, error) {
	base := filepath.Join(os.TempDir(), "hangar-objtest")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) != nil {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
	dir := filepath.Join(base, strconv.Itoa(os.Getpid()))
	return dir, os.MkdirAll(dir, 0o755)
}

// freePort is a port free on host now.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until addr accepts connections, or the deadline.
func waitListening(addr string, within time.Duration, logFile string, exited <-chan struct{}) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("it exited; its log:\n%s", tail(string(log)))
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(logFile)
	return fmt.Errorf("nothing listens on %s after %s; its log:\n%s", addr, within, tail(string(log)))
}

func tail(s string) string {
	if lines := strings.Split(s, "\n"); len(lines) > 30 {
		return strings.Join(lines[len(lines)-30:], "\n")
	}
	return s
}

// launch starts a server (argv from args(port)) on host and waits for its port; it tries again
// on another port when the first was taken meanwhile.
func launch(name, host string, args func(port int, dir string) []string, env []string) (addr, dir string, err error) {
	base, err := scratch()
	if err != nil {
		return "", "", err
	}
	for try := 0; try < 3; try++ {
		port, err := freePort(host)
		if err != nil {
			return "", "", fmt.Errorf("%s: a port on %s: %w", name, host, err)
		}
		dir = filepath.Join(base, fmt.Sprintf("%s-%s-%d", name, host, port))
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
			return "", "", err
		}
		logPath := filepath.Join(dir, "log")
		logf, err := os.Create(logPath)
		if err != nil {
			return "", "", err
		}
		argv := args(port, filepath.Join(dir, "data"))
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr, cmd.Env, cmd.Dir = logf, logf, append(os.Environ(), env...), dir
		exited, err := start(cmd)
		if err != nil {
			logf.Close()
			return "", "", fmt.Errorf("start %s: %w", name, err)
		}
		logf.Close()
		addr = net.JoinHostPort(host, strconv.Itoa(port))
		if err = waitListening(addr, 30*time.Second, logPath, exited); err == nil {
			return addr, dir, nil
		}
		cmd.Process.Kill()
		if try == 2 {
			return "", "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return "", "", errors.New("unreachable")
}

// shared returns the server of kind on host that this binary started, starting it first.
func shared[S any](t testing.TB, kind, host string, mk func() (S, error)) S {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	key := kind + "@" + host
	if s, ok := servers[key]; ok {
		return s.(S)
	}
	s, err := mk()
	if err != nil {
		t.Fatalf("objtest: start %s on %s: %v", kind, host, err)
	}
	servers[key] = s
	return s
}
