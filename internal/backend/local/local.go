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
	"syscall"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/node"
)

// ResultFile is written by the supervisor into the run directory when the run ends.
const ResultFile = "result.json"

// Backend starts `hangar supervise` processes on this machine.
type Backend struct {
	// Root holds runs/<id>/ directories and the node's blob cache.
	Root string
	// Exe is the hangar binary to start.
	Exe string
	// ServerURL and ServerURLFile tell the supervisor where the server is.
	ServerURL     func() string
	ServerURLFile string
	// BlobDir is the server's blob store, read directly by local supervisors.
	BlobDir string
	// NodeID is the cluster node this backend runs on (set by agents), given to supervisors.
	NodeID string
	Log    *slog.Logger
}

type handle struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start_time"` // /proc/<pid>/stat field 22, guards against pid reuse
	Dir       string `json:"dir"`
}

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
		RunID: l.RunID, Token: l.Token, ServerURL: b.ServerURL(), ServerURLFile: b.ServerURLFile,
		Dir: dir, CacheDir: filepath.Join(b.Root, "cache", "blobs"), LocalBlobDir: b.BlobDir, NodeID: b.NodeID,
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("submit %s: start supervisor: %w", l.RunID, err)
	}
	go cmd.Wait() // reap; the supervisor reports its own result
	h := handle{PID: cmd.Process.Pid, StartTime: node.ProcessStartTime(cmd.Process.Pid), Dir: dir}
	if err := writeJSON(filepath.Join(dir, "handle.json"), h, 0o644); err != nil {
		return nil, fmt.Errorf("submit %s: %w", l.RunID, err)
	}
	b.Log.Info("started supervisor", "run", l.RunID, "pid", h.PID)
	return json.Marshal(h)
}

// existing returns the handle of a live supervisor already started for dir.
func (b *Backend) existing(dir string) (handle, bool) {
	var h handle
	data, err := os.ReadFile(filepath.Join(dir, "handle.json"))
	if err != nil || json.Unmarshal(data, &h) != nil {
		return h, false
	}
	return h, alive(h)
}

// Status reads the supervisor's result file and whether its process still exists.
func (b *Backend) Status(ctx context.Context, hb backend.Handle) (backend.Status, error) {
	var h handle
	if err := json.Unmarshal(hb, &h); err != nil {
		return backend.Status{}, fmt.Errorf("decode local handle: %w", err)
	}
	st := backend.Status{Alive: alive(h)}
	data, err := os.ReadFile(filepath.Join(h.Dir, ResultFile))
	if err == nil {
		var r backend.Result
		if err := json.Unmarshal(data, &r); err == nil {
			st.Final = &r
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("read result: %w", err)
	}
	if !st.Alive && st.Final == nil {
		st.Reason = "the supervisor process is gone and left no result"
	}
	return st, nil
}

// Cancel sends SIGTERM to the supervisor, which stops the user's processes (SIGTERM, grace, SIGKILL)
// and still collects outputs and logs.
func (b *Backend) Cancel(ctx context.Context, hb backend.Handle) error {
	var h handle
	if err := json.Unmarshal(hb, &h); err != nil {
		return fmt.Errorf("decode local handle: %w", err)
	}
	if !alive(h) {
		return nil
	}
	if err := syscall.Kill(h.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal supervisor %d: %w", h.PID, err)
	}
	return nil
}

// Describe reports this machine.
func (b *Backend) Describe(ctx context.Context, t compute.Target) (*compute.NodeInfo, error) {
	return node.Detect(ctx), nil
}

func alive(h handle) bool {
	if h.PID <= 0 {
		return false
	}
	if err := syscall.Kill(h.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	st := node.ProcessStartTime(h.PID)
	if st == 0 {
		return false // gone, or a zombie
	}
	return h.StartTime == 0 || st == h.StartTime
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
