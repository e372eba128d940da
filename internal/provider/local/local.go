package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/proc"
	"github.com/hangar-ml/hangar/internal/provider"
)

// RecordFile, in a node's work dir, records the agent the provider started (pid, start time, GPUs).
const RecordFile = "provider.json"

// DefaultStopGrace is how long a deleted node's agent gets to cancel its runs before SIGKILL.
const DefaultStopGrace = 20 * time.Second

// DefaultStartWait is how long Create waits for a new agent to join (api.AgentReadyLog in its
// log) before it returns anyway: an agent that exits meanwhile fails the Create with its log.
const DefaultStartWait = 10 * time.Second

// Provider starts agents on this machine. A node's directory, <Root>/<node id>, is its provider
// id: it holds provider.json and agent.log, and is the agent's work dir unless the request
// names another.
//
// Each agent offers the size's cores and memory (advertised, not enforced: runs are not
// confined to them) and distinct GPUs: the first free ones of GPUs, free meaning not held by a
// live agent this provider started. The join token reaches the agent through its environment,
// not its command line.
type Provider struct {
	// Exe is the hangar binary.
	Exe string
	// Root holds a work dir per node (<Root>/<node id>) unless the request names one.
	Root string
	// GPUs are the machine's GPU indices to share out.
	GPUs []int
	// AgentArgs are extra flags for each agent (e.g. --heartbeat 1s).
	AgentArgs []string
	// Hide are directories the agents' runs must not see besides their work dirs (the workspace
	// home, which holds the agents' directories).
	Hide []string
	// StopGrace is how long Delete lets an agent cancel its runs before killing it.
	StopGrace time.Duration
	// StartWait bounds how long Create waits for the agent to join; 0 means DefaultStartWait.
	StartWait time.Duration
	Log       *slog.Logger

	mu sync.Mutex // one Create at a time, so that two agents never get the same GPU
}

var (
	_ provider.Provider  = (*Provider)(nil)
	_ provider.Explainer = (*Provider)(nil)
)

// record is the agent the provider started: its process (pid and start time) and its GPUs.
type record struct {
	NodeID string `json:"node_id"`
	proc.Proc
	GPUs []int `json:"gpus"`
}

func (p *Provider) grace() time.Duration {
	if p.StopGrace > 0 {
		return p.StopGrace
	}
	return DefaultStopGrace
}

// Create starts the node's agent detached in its own session and returns its work dir.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (string, error) {
	dir, rec, st, err := p.launch(req)
	if err != nil {
		return "", fmt.Errorf("create node %s: %w", req.NodeID, err)
	}
	if err := p.awaitStart(ctx, st); err != nil {
		return "", fmt.Errorf("create node %s: %w", req.NodeID, err)
	}
	p.Log.Info("started agent", "node", req.NodeID, "pid", rec.PID, "dir", dir, "gpus", rec.GPUs)
	return dir, nil
}

// launch picks the node's GPUs, starts its agent and records it, one node at a time (so that
// two agents never get the same GPU); waiting for the agent to join happens outside the lock.
func (p *Provider) launch(req provider.CreateRequest) (string, record, started, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	dir, err := filepath.Abs(filepath.Join(p.Root, req.NodeID))
	if err != nil {
		return "", record{}, started{}, err
	}
	work := req.WorkDir
	if work == "" {
		work = dir
	}
	gpus, err := p.freeGPUs(req.Size.GPUs)
	if err != nil {
		return "", record{}, started{}, err
	}
	for _, d := range []string{dir, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", record{}, started{}, err
		}
	}
	rec, st, err := p.start(req, dir, work, gpus)
	if err != nil {
		return "", record{}, started{}, err
	}
	if err := writeRecord(dir, rec); err != nil {
		_ = syscall.Kill(rec.PID, syscall.SIGKILL)
		return "", record{}, started{}, err
	}
	return dir, rec, st, nil
}

// started is an agent just started: where its log is, how long that log was before, and the
// result of waiting for it.
type started struct {
	log    string
	offset int64
	exited <-chan error
}

// awaitStart waits until the agent has joined (api.AgentReadyLog in its log), exited (an error
// with its log's tail) or StartWait passed (a slow join still has the node's join timeout).
func (p *Provider) awaitStart(ctx context.Context, st started) error {
	limit := p.StartWait
	if limit <= 0 {
		limit = DefaultStartWait
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(readFrom(st.log, st.offset), api.AgentReadyLog) {
		select {
		case err := <-st.exited:
			log := readFrom(st.log, st.offset)
			if strings.Contains(log, api.AgentReadyLog) {
				return nil // it joined, then left: the node's heartbeats tell the rest
			}
			out := provider.Summary(log)
			if out == "" {
				out = "it wrote nothing"
			}
			return fmt.Errorf("the agent exited at start (%v): %s", err, out)
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// Explain says whether the node's agent still runs, with the tail of its log.
func (p *Provider) Explain(_ context.Context, req provider.DeleteRequest) string {
	rec, err := readRecord(req.ProviderID)
	if err != nil {
		return ""
	}
	state := fmt.Sprintf("the agent (pid %d) has exited", rec.PID)
	if rec.Alive() {
		state = fmt.Sprintf("the agent (pid %d) is running", rec.PID)
	}
	path := filepath.Join(req.ProviderID, "agent.log")
	fi, err := os.Stat(path)
	if err != nil {
		return state
	}
	out := provider.Summary(readFrom(path, max(0, fi.Size()-16<<10)))
	if out == "" {
		return state + "; agent.log is empty"
	}
	return state + "; agent.log: " + out
}

// readFrom returns a file's content from offset on ("" when it cannot be read).
func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return string(b)
}

// start starts the agent with work as its work dir; its log goes to <dir>/agent.log.
func (p *Provider) start(req provider.CreateRequest, dir, work string, gpus []int) (record, started, error) {
	gpuFlag := "none"
	if len(gpus) > 0 {
		ids := make([]string, len(gpus))
		for i, g := range gpus {
			ids[i] = strconv.Itoa(g)
		}
		gpuFlag = strings.Join(ids, ",")
	}
	args := []string{"agent", "--server", req.JoinURL, "--work-dir", work, "--node-id", req.NodeID,
		"--cores", strconv.Itoa(req.Size.Cores), "--memory", strconv.FormatInt(req.Size.MemoryBytes, 10),
		"--gpus", gpuFlag, "--kill-runs-on-exit", "--exit-grace", p.grace().String()}
	st := started{log: filepath.Join(dir, "agent.log")}
	logf, err := os.OpenFile(st.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return record{}, st, err
	}
	defer logf.Close()
	if fi, err := logf.Stat(); err == nil {
		st.offset = fi.Size() // a node's log is appended to across restarts of its agent
	}
	for _, h := range p.Hide {
		args = append(args, "--hide", h)
	}
	cmd := exec.Command(p.Exe, append(args, p.AgentArgs...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(provider.BaseEnv(), "HANGAR_JOIN_TOKEN="+req.JoinToken, "HANGAR_JOIN_CA="+req.JoinCA)
	agent, exited, err := proc.StartDetached(cmd)
	if err != nil {
		return record{}, st, fmt.Errorf("start agent: %w", err)
	}
	st.exited = exited
	return record{NodeID: req.NodeID, Proc: agent, GPUs: gpus}, st, nil
}

// freeGPUs picks n GPUs no live agent of this provider holds.
func (p *Provider) freeGPUs(n int) ([]int, error) {
	if n == 0 {
		return nil, nil
	}
	used := map[int]bool{}
	files, _ := filepath.Glob(filepath.Join(p.Root, "*", RecordFile))
	for _, f := range files {
		if rec, err := readRecord(filepath.Dir(f)); err == nil && rec.Alive() {
			for _, g := range rec.GPUs {
				used[g] = true
			}
		}
	}
	var free []int
	for _, g := range p.GPUs {
		if !used[g] {
			free = append(free, g)
		}
	}
	if len(free) < n {
		return nil, fmt.Errorf("the size needs %d GPUs; %d of this machine's %d are free", n, len(free), len(p.GPUs))
	}
	return slices.Clone(free[:n]), nil
}

// Delete stops the node's agent: SIGTERM (it cancels its runs and waits for them up to
// StopGrace), then SIGKILL. Its work dir stays, with the runs' directories and agent.log.
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) error {
	dir := req.ProviderID
	rec, err := readRecord(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete node %s: %w", req.NodeID, err)
	}
	if rec.Alive() {
		// The agent cancels its runs and waits for them up to the grace period; a little more
		// before SIGKILL.
		if err := proc.Stop(ctx, rec.Proc, p.grace()+5*time.Second); err != nil {
			return fmt.Errorf("delete node %s: stop its agent: %w", req.NodeID, err)
		}
	}
	if err := os.Remove(filepath.Join(dir, RecordFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete node %s: %w", req.NodeID, err)
	}
	p.Log.Info("deleted node", "node", req.NodeID, "pid", rec.PID)
	return nil
}

func readRecord(dir string) (record, error) {
	var rec record
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("read %s: %w", filepath.Join(dir, RecordFile), err)
	}
	return rec, nil
}

func writeRecord(dir string, rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, RecordFile)
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
