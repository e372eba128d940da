package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/proc"
	"github.com/hangar-ml/hangar/internal/runbox"
)

// ResultFile is written by the supervisor into the run directory when the run ends.
const ResultFile = job.ResultFile

// Backend starts `hangar supervise` processes on this machine.
type Backend struct {
	// Root holds runs/<id>/ directories and the node's blob cache.
	Root string
	// Exe is the hangar binary to start.
	Exe string
	// ServerURL and ServerURLFile tell the supervisor where the server is.
	ServerURL     func() string
	ServerURLFile string
	// ServerCA is the PEM of an https server's certificate: the only one supervisors trust.
	ServerCA []byte
	// BlobDir is the server's blob store, read directly by local supervisors.
	BlobDir string
	// NodeID is the cluster node this backend runs on (set by agents), given to supervisors.
	NodeID string
	// Hide are the directories runs must not see (the workspace's home, an agent's work
	// directory); the supervisor shows each run only its own directory under them.
	Hide []string
	Log  *slog.Logger
	// ObjectCacheBytes bounds the node's object cache (api.SupervisorConfig.ObjectCacheBytes).
	ObjectCacheBytes int64
}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Describer = (*Backend)(nil)
)

// handle is the supervisor's process (pid and start time, so a reused pid is not taken for it)
// and the run's directory.
type handle struct {
	proc.Proc
	Dir string `json:"dir"`
	// Machine is where the supervisor runs (node.MachineID). On a workspace whose servers share
	// its directory from several machines (design 0020), a leader on another machine cannot see
	// the process: see foreign.
	Machine string `json:"machine,omitempty"`
}

// foreign reports whether h's supervisor runs on another machine than this process.
func (h handle) foreign() bool { return h.Machine != "" && h.Machine != thisMachine() }

// thisMachine is node.MachineID, read once.
var thisMachine = sync.OnceValue(node.MachineID)

// RunDir is where a run lives on this machine.
func (b *Backend) RunDir(runID string) string { return filepath.Join(b.Root, "runs", runID) }

// Submit starts the supervisor detached in its own session, so that it outlives the server.
// Called again for a run whose supervisor is alive, it returns the existing handle.
func (b *Backend) Submit(ctx context.Context, l backend.Launch) (backend.Handle, error) {
	dir := b.RunDir(l.RunID)
	if h, ok := b.existing(dir); ok {
		return json.Marshal(h)
	}
	if err := os.MkdirAll(filepath.Join(dir, "system_logs"), 0o755); err != nil {
		return nil, fmt.Errorf("submit %s: %w", l.RunID, err)
	}
	cfg := api.SupervisorConfig{
		RunID: l.RunID, Token: l.Token, ServerURL: b.ServerURL(), ServerURLFile: b.ServerURLFile, ServerCA: string(b.ServerCA),
		Dir: dir, CacheDir: filepath.Join(b.Root, "cache", "blobs"), LocalBlobDir: b.BlobDir, NodeID: b.NodeID,
		Hide: b.Hide, ObjectCacheBytes: b.ObjectCacheBytes,
	}
	cfgPath := filepath.Join(dir, "supervisor.json")
	if err := writeJSON(cfgPath, cfg, 0o600); err != nil {
		return nil, fmt.Errorf("submit %s: %w", l.RunID, err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "system_logs", "supervisor.txt"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("submit %s: %w", l.RunID, err)
	}
	defer logf.Close()
	cmd := exec.Command(b.Exe, "supervise", "--config", cfgPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = supervisorEnv()
	p, _, err := proc.StartDetached(cmd) // the supervisor reports its own result
	if err != nil {
		return nil, fmt.Errorf("submit %s: start supervisor: %w", l.RunID, err)
	}
	h := handle{Proc: p, Dir: dir, Machine: thisMachine()}
	if err := writeJSON(filepath.Join(dir, "handle.json"), h, 0o644); err != nil {
		return nil, fmt.Errorf("submit %s: %w", l.RunID, err)
	}
	b.Log.Info("started supervisor", "run", l.RunID, "pid", h.PID)
	return json.Marshal(h)
}

// existing returns the handle of a live supervisor already started for dir (one on another
// machine counts as live: a second would run the run twice).
func (b *Backend) existing(dir string) (handle, bool) {
	var h handle
	data, err := os.ReadFile(filepath.Join(dir, "handle.json"))
	if err != nil || backend.DecodeHandle(data, &h) != nil {
		return h, false
	}
	return h, h.foreign() || h.Alive()
}

// decode reads a handle this backend handed out: a supervisor's pid, and a run directory of
// this backend's (Status reaps what it names, so a handle may not point elsewhere).
func (b *Backend) decode(hb backend.Handle) (handle, error) {
	var h handle
	if err := backend.DecodeHandle(hb, &h); err != nil {
		return h, err
	}
	if h.PID <= 0 || h.Dir == "" {
		return h, fmt.Errorf("%w: local handle %s lacks its pid or directory", backend.ErrBadHandle, hb)
	}
	if filepath.Clean(h.Dir) != filepath.Clean(b.RunDir(filepath.Base(h.Dir))) {
		return h, fmt.Errorf("%w: %s is not a run directory of %s", backend.ErrBadHandle, h.Dir, b.Root)
	}
	return h, nil
}

// Status reads the supervisor's result file and whether its process still exists. A supervisor
// that is gone without a result leaves its run's processes behind: they are ended here (this is
// where the loss is noticed) and the reason says how many.
func (b *Backend) Status(ctx context.Context, hb backend.Handle) (backend.Status, error) {
	h, err := b.decode(hb)
	if err != nil {
		return backend.Status{}, err
	}
	if h.foreign() {
		// This server cannot see that machine's processes, and must not reap what it cannot
		// see: the supervisor reports to the server itself (it finds the leader in the shared
		// directory's server.json) and its result file, in that directory, ends the run. Asked
		// because the run is silent, and with no result, its node does not answer: the
		// controller marks it NotResponding, then fails it after LostAfter, as for a host.
		final, err := readResult(h.Dir)
		if err == nil && final == nil {
			err = fmt.Errorf("its supervisor runs on machine %s, which this server cannot see, and left no result", h.Machine)
		}
		return backend.Status{Final: final}, err
	}
	st := backend.Status{Alive: h.Alive()}
	final, err := readResult(h.Dir)
	if err != nil {
		return st, err
	}
	st.Final = final
	if !st.Alive && st.Final == nil {
		st.Reason = "the supervisor process is gone and left no result"
		if err := b.reap(ctx, h.Dir, st.Reason); err != nil {
			st.Reason += "; " + err.Error()
		}
		if st.Final, err = readResult(h.Dir); err != nil {
			return st, err
		}
	}
	return st, nil
}

// readResult reads the result file of the run in dir (nil when there is none, or it is cut
// short).
func readResult(dir string) (*job.Result, error) {
	data, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	r, _ := job.ParseResult(data)
	return r, nil
}

// reapTimeout bounds `hangar reap` (ending the processes, then standing in for the supervisor).
const reapTimeout = 3 * time.Minute

// reap ends what the run in dir left running and has `hangar reap` stand in for its lost
// supervisor (ship its spool, register its logs and outputs, write the result file). Where that
// binary cannot run, the processes are still ended here.
func (b *Backend) reap(ctx context.Context, dir, why string) error {
	run := filepath.Base(dir)
	ctx, cancel := context.WithTimeout(ctx, reapTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.Exe, "reap", "--run", run, "--dir", dir, "--why", why)
	cmd.Env = supervisorEnv()
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	b.Log.Warn("hangar reap", "run", run, "err", err, "output", string(out))
	r, rerr := runbox.Reap(ctx, run, dir)
	if rerr != nil {
		return fmt.Errorf("could not end the run's processes: %w", rerr)
	}
	return errors.New(r.String())
}

// Cancel sends SIGTERM to the supervisor, which stops the user's processes (SIGTERM, grace, SIGKILL)
// and still collects outputs and logs.
func (b *Backend) Cancel(ctx context.Context, hb backend.Handle) error {
	h, err := b.decode(hb)
	if err != nil {
		return err
	}
	if h.foreign() || !h.Alive() {
		return nil // one on another machine hears of the cancel in its heartbeat's reply
	}
	// The supervisor alone: it stops its command's processes itself, after the grace period.
	if err := syscall.Kill(h.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal supervisor %d: %w", h.PID, err)
	}
	return nil
}

// Describe reports this machine.
func (b *Backend) Describe(ctx context.Context, t compute.Target) (*compute.NodeInfo, error) {
	return node.Detect(ctx), nil
}

// supervisorEnv is the server's environment without the workspace's admin credentials.
func supervisorEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HANGAR_TOKEN=") || strings.HasPrefix(kv, "HANGAR_URL=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func writeJSON(path string, v any, mode os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
