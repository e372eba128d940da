package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// PodEntry is what the container of a Hangar pod runs as its first process (`hangar pod-entry`,
// Kubernetes backend): it starts the run's supervisor, forwards SIGTERM (a deleted Job's pods) to
// it, and when the supervisor is gone without a result it runs the stand-in (`hangar reap`: end
// the processes the run left, ship what was spooled). Then it writes the run's result as the
// container's termination message, where the backend reads how the run ended after the pod's
// files are gone.
type PodEntry struct {
	// Exe is the hangar binary (the one running).
	Exe string
	// Config is the supervisor config the pod was given (a mounted Secret, read-only).
	Config string
	// RankEnv names the variable holding this pod's node rank (JOB_COMPLETION_INDEX); "" = rank 0.
	RankEnv string
	// TerminationLog is the container's terminationMessagePath.
	TerminationLog string
	Log            *slog.Logger
}

// defaultPath is the PATH of a container whose image sets none (Docker's default).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// terminationMax is what Kubernetes keeps of a termination message (4096 bytes).
const terminationMax = 4096

// Run runs the entry and returns the exit code of the container: 0 when the run succeeded.
func (e PodEntry) Run(ctx context.Context) int {
	sig := newSignals()
	defer sig.close()
	if os.Getenv("PATH") == "" { // an image made without ENV PATH (podman import, ctr import)
		_ = os.Setenv("PATH", defaultPath)
	}
	if claim, ok := readClaim(e.Config); ok { // a Deployment's pod (podclaim.go)
		return e.runClaims(ctx, *claim, sig)
	}
	res := e.run(ctx, sig)
	if err := os.WriteFile(e.TerminationLog, TerminationMessage(res), 0o644); err != nil {
		e.Log.Error("write the termination message", "path", e.TerminationLog, "err", err)
	}
	if res.State == job.Completed {
		return 0
	}
	return 1
}

// closeGate is what a supervisor sidecar (sidecar.go) does when its run ended before the image
// started: the gate says why, so the gate container fails (Kubernetes retries it with its
// backoff, and the next run the pod claims opens it).
func (e PodEntry) closeGate(cfg api.SupervisorConfig, res job.Result) {
	if cfg.ServeGate == "" {
		return
	}
	if _, err := os.Stat(cfg.ServeGate); errors.Is(err, os.ErrNotExist) {
		if err := WriteGate(cfg.ServeGate, "the run ended before the image could start: "+string(res.State)+": "+res.Reason); err != nil {
			e.Log.Error("close the gate", "err", err)
		}
	}
}

func (e PodEntry) run(ctx context.Context, sig *signals) job.Result {
	cfg, err := e.config()
	if err != nil {
		return job.Result{State: job.Failed, Reason: "pod entry: " + err.Error(), Time: time.Now().UTC()}
	}
	return e.result(ctx, cfg, sig)
}

func (e PodEntry) result(ctx context.Context, cfg api.SupervisorConfig, sig *signals) job.Result {
	path := filepath.Join(cfg.Dir, "supervisor.json")
	code, err := e.supervise(ctx, path, sig)
	if res, ok := readResult(cfg.Dir); ok {
		return *res
	}
	why := fmt.Sprintf("the supervisor ended without a result (%s)", exitText(code, err))
	reap := exec.CommandContext(context.WithoutCancel(ctx), e.Exe, "reap", "--run", cfg.RunID, "--dir", cfg.Dir, "--why", why)
	if out, err := reap.CombinedOutput(); err != nil {
		e.Log.Error("reap", "err", err, "output", string(out))
	} else {
		_ = os.WriteFile(filepath.Join(cfg.Dir, SystemLogsDir, "reap.txt"), out, 0o644)
	}
	if res, ok := readResult(cfg.Dir); ok {
		return *res
	}
	return job.Result{State: job.Failed, Reason: why, Time: time.Now().UTC()}
}

// config reads the mounted config, completes it for this pod (its node rank) and writes it into
// the run's directory, where the supervisor and the stand-in read it.
func (e PodEntry) config() (api.SupervisorConfig, error) {
	var cfg api.SupervisorConfig
	data, err := os.ReadFile(e.Config)
	if err != nil {
		return cfg, fmt.Errorf("read the supervisor config: %w", err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("read the supervisor config %s: %w", e.Config, err)
	}
	if e.RankEnv != "" {
		rank, err := strconv.Atoi(os.Getenv(e.RankEnv))
		if err != nil || rank < 0 || (len(cfg.Nodes) > 0 && rank >= len(cfg.Nodes)) {
			return cfg, fmt.Errorf("%s=%q is not a node rank of this run", e.RankEnv, os.Getenv(e.RankEnv))
		}
		cfg.NodeRank = rank
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return cfg, err
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return cfg, err
	}
	return cfg, os.WriteFile(filepath.Join(cfg.Dir, "supervisor.json"), out, 0o600)
}

// signals are the SIGTERM and SIGINT the entry gets: forwarded to the supervisor while it runs,
// and remembered (stopped is closed at the first).
type signals struct {
	ch      chan os.Signal
	stopped chan struct{}
	mu      sync.Mutex
	to      *os.Process
	once    sync.Once
}

func newSignals() *signals {
	s := &signals{ch: make(chan os.Signal, 4), stopped: make(chan struct{})}
	signal.Notify(s.ch, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for sig := range s.ch {
			s.once.Do(func() { close(s.stopped) })
			s.mu.Lock()
			if s.to != nil {
				_ = s.to.Signal(sig)
			}
			s.mu.Unlock()
		}
	}()
	return s
}

// forwardTo makes p the process signals go to; a stop that came before it started is sent now.
func (s *signals) forwardTo(p *os.Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.to = p
	if p != nil && s.received() {
		_ = p.Signal(syscall.SIGTERM)
	}
}

func (s *signals) received() bool { return closed(s.stopped) }

func (s *signals) close() {
	signal.Stop(s.ch)
	close(s.ch)
}

// supervise runs `hangar supervise` and waits for it, forwarding SIGTERM and SIGINT. As the
// container's first process it also reaps the orphans the run leaves (nobody else would).
func (e PodEntry) supervise(ctx context.Context, config string, sig *signals) (int, error) {
	cmd := exec.Command(e.Exe, "supervise", "--config", config)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("start the supervisor: %w", err)
	}
	sig.forwardTo(cmd.Process)
	defer sig.forwardTo(nil)
	if os.Getpid() != 1 {
		err := cmd.Wait()
		return cmd.ProcessState.ExitCode(), waitErr(err)
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("wait for the supervisor: %w", err)
		}
		if pid == cmd.Process.Pid {
			if ws.Signaled() {
				return -1, fmt.Errorf("killed by %s", ws.Signal())
			}
			return ws.ExitStatus(), nil
		}
	}
}

func waitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Errorf("killed by %s", ws.Signal())
		}
		return nil
	}
	return err
}

func exitText(code int, err error) string {
	if err != nil {
		return err.Error()
	}
	return "exit code " + strconv.Itoa(code)
}

func readResult(dir string) (*job.Result, bool) {
	data, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if err != nil {
		return nil, false
	}
	return job.ParseResult(data)
}

// TerminationMessage is a result as a termination message: its JSON, with the reason shortened
// to fit what Kubernetes keeps.
func TerminationMessage(r job.Result) []byte {
	for {
		b, _ := json.Marshal(r)
		if len(b) <= terminationMax || r.Reason == "" {
			return b
		}
		cut := len(r.Reason) - (len(b) - terminationMax) - len("...")
		if cut <= 0 {
			r.Reason = ""
			continue
		}
		r.Reason = r.Reason[:cut] + "..."
	}
}

// InstallSelf copies the running binary to dest (executable), for a supervisor image's init
// container: the image may hold nothing but the binary, so no cp is at hand.
func InstallSelf(exe, dest string) error {
	src, err := os.Open(exe)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := dest + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("install the hangar binary: %w", err)
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return fmt.Errorf("install the hangar binary: %w", err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dest)
}
