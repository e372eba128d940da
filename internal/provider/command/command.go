package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/provider"
	"github.com/hangar-ml/hangar/internal/runbox"
)

// Provider runs the hooks of a compute.Provider of type command with bash.
//
// create gets HANGAR_JOIN_URL, HANGAR_JOIN_TOKEN, HANGAR_NODE_ID, HANGAR_POOL, HANGAR_SIZE,
// HANGAR_CORES, HANGAR_MEMORY_BYTES, HANGAR_GPUS and HANGAR_WORK_DIR (after the provider's env
// map, which cannot override them); the last line it prints on stdout is the provider id.
// delete gets HANGAR_PROVIDER_ID, HANGAR_NODE_ID and HANGAR_POOL; an empty delete hook deletes
// nothing. Each hook runs in its own process group, killed when it outlives Timeout. A hook
// may leave background processes behind (e.g. an agent started with nohup) as long as they do
// not keep its stdout and stderr open.
type Provider struct {
	Spec compute.Provider
	// Dir is where hooks run ("" = the server's working directory).
	Dir string
	// Hide are directories of the server's machine that runs must not see (its workspace home),
	// given to the create hook as HANGAR_HIDE (a path list) for agents started on that machine.
	Hide []string
	Log  *slog.Logger

	mu sync.Mutex
	// created holds, per node, what its create hook printed (one line), until Delete: the
	// reason a node whose agent never joins is deleted with. In memory only: after a server
	// restart the reason goes without it.
	created map[string]string
}

var (
	_ provider.Provider  = (*Provider)(nil)
	_ provider.Explainer = (*Provider)(nil)
)

// Create runs the create hook.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (string, error) {
	if strings.TrimSpace(p.Spec.Create) == "" {
		return "", errors.New("create node: the provider has no create hook")
	}
	vars := provider.Env(req)
	if len(p.Hide) > 0 {
		vars = append(vars, "HANGAR_HIDE="+strings.Join(p.Hide, string(os.PathListSeparator)))
	}
	out, both, err := p.run(ctx, "create", p.Spec.Create, vars)
	if err != nil {
		return "", fmt.Errorf("create node %s: %w", req.NodeID, err)
	}
	id := lastLine(out)
	if id == "" {
		return "", fmt.Errorf("create node %s: the create hook printed no provider id (its last line on stdout)%s", req.NodeID, suffix(both))
	}
	p.mu.Lock()
	if p.created == nil {
		p.created = map[string]string{}
	}
	p.created[req.NodeID] = provider.Summary(both)
	p.mu.Unlock()
	p.Log.Info("created node", "node", req.NodeID, "provider_id", id)
	return id, nil
}

// Explain returns what the node's create hook printed, when this provider ran it.
func (p *Provider) Explain(_ context.Context, req provider.DeleteRequest) string {
	p.mu.Lock()
	out, ok := p.created[req.NodeID]
	p.mu.Unlock()
	switch {
	case !ok:
		return ""
	case out == "":
		return "the create hook printed nothing"
	}
	return "create hook output: " + out
}

// Delete runs the delete hook.
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) error {
	if strings.TrimSpace(p.Spec.Delete) == "" {
		return nil
	}
	env := []string{"HANGAR_PROVIDER_ID=" + req.ProviderID, "HANGAR_NODE_ID=" + req.NodeID, "HANGAR_POOL=" + req.Pool}
	if _, _, err := p.run(ctx, "delete", p.Spec.Delete, env); err != nil {
		return fmt.Errorf("delete node %s (%s): %w", req.NodeID, req.ProviderID, err)
	}
	p.mu.Lock()
	delete(p.created, req.NodeID)
	p.mu.Unlock()
	return nil
}

// Preempted runs the preempted hook (when the cluster has one): the provider ids it prints, one
// per line, are machines the cloud took back.
func (p *Provider) Preempted(ctx context.Context) ([]string, error) {
	if strings.TrimSpace(p.Spec.Preempted) == "" {
		return nil, nil
	}
	out, _, err := p.run(ctx, "preempted", p.Spec.Preempted, nil)
	if err != nil {
		return nil, fmt.Errorf("list preempted nodes: %w", err)
	}
	var ids []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ids = append(ids, l)
		}
	}
	return ids, nil
}

func (p *Provider) timeout() time.Duration {
	if p.Spec.Timeout > 0 {
		return time.Duration(p.Spec.Timeout) * time.Second
	}
	return compute.DefaultProviderTimeout * time.Second
}

// run runs one hook and returns its stdout and the tail of its stdout and stderr together (as
// written); errors carry that tail in one line. The hook runs where the workspace's home is
// hidden (Hide), with none of the server's HANGAR_ variables but its own.
func (p *Provider) run(ctx context.Context, name, script string, vars []string) (stdout, both string, err error) {
	limit := p.timeout()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd, herr := runbox.Hiding(p.Hide, "bash", "-c", script)
	if herr != nil {
		mode, _ := runbox.ParseMode(os.Getenv(runbox.ModeEnv))
		if mode == runbox.SandboxRequired {
			return "", "", fmt.Errorf("%s hook not run: the sandbox is required: %w", name, herr)
		}
		if mode != runbox.SandboxOff {
			p.Log.Warn("the workspace's files are not hidden from the hook", "hook", name, "err", herr)
		}
	}
	cmd.Dir = p.Dir
	cmd.Env = append(append(provider.BaseEnv(), userEnv(p.Spec.Env)...), vars...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second // a background child holding the pipes does not hold us
	out, all := &tail{max: 64 << 10}, &tail{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = io.MultiWriter(out, all), all
	if cmd, err = runbox.StartHiding(cmd); err == nil {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			err = <-done
		}
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // it exited 0; something it started kept the pipes open
	}
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", all.String(), fmt.Errorf("%s hook killed after its timeout of %s%s", name, limit, suffix(all.String()))
	case err != nil:
		return "", all.String(), fmt.Errorf("%s hook: %w%s", name, err, suffix(all.String()))
	}
	return out.String(), all.String(), nil
}

func userEnv(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tail keeps the last max bytes written to it. The hook's stdout and stderr are copied by
// two goroutines, so writes are serialised.
type tail struct {
	max int
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// suffix is ": <output summary>" for an error message, or "" when the hook wrote nothing.
func suffix(out string) string {
	if s := provider.Summary(out); s != "" {
		return ": " + s
	}
	return ""
}
