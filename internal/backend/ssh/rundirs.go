package ssh

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/remote"
)

// ErrRunLive refuses to remove the directory of a run whose supervisor still runs on the host.
var ErrRunLive = errors.New("its supervisor still runs")

// RunDirsOn lists the run directories under the host's work dir (<work_dir>/runs/<id>), on a
// host this server is connected to (a host it has not talked to since it started is left alone
// until a run brings it back). They are not this workspace's alone: another workspace may share
// the host and its work dir, so the controller removes only its own runs' directories.
func (b *Backend) RunDirsOn(ctx context.Context, t compute.Target) (ids []string, private bool, err error) {
	h := b.connected(t.Name)
	if h == nil {
		return nil, false, nil
	}
	if err := h.client.Unreachable(t.Name); err != nil {
		return nil, false, err
	}
	out, err := remote.Output(ctx, h.client, "cd "+remote.Join(path.Join(h.work, "runs"))+" 2>/dev/null && for d in *; do [ -d \"$d\" ] && printf '%s\\n' \"$d\"; done; true")
	if err != nil {
		return nil, false, fmt.Errorf("list run directories on %s: %w", t.Name, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && l != "*" && !strings.HasPrefix(l, ".") {
			ids = append(ids, l)
		}
	}
	return ids, false, nil
}

// connected is the target's connection, if this server made one.
func (b *Backend) connected(name string) *host {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hosts[name]
}

// RemoveRunDirOn removes a run's directory and its box record on the host once its supervisor
// is gone (read-only folders in it are made writable first; links are removed, not followed).
func (b *Backend) RemoveRunDirOn(ctx context.Context, t compute.Target, runID string) error {
	if runID == "" || strings.ContainsAny(runID, "/\x00") || strings.HasPrefix(runID, ".") {
		return fmt.Errorf("remove run directory: %q is not a run id", runID)
	}
	h, err := b.host(ctx, t.Name)
	if err != nil {
		return err
	}
	dir := path.Join(h.work, "runs", runID)
	if data, err := h.client.ReadFile(ctx, path.Join(dir, "handle.json")); err == nil {
		var hd handle
		if backend.DecodeHandle(data, &hd) == nil && hd.Proc.PID > 0 {
			alive, err := remote.Alive(ctx, h.client, hd.Proc)
			if err != nil {
				return fmt.Errorf("remove run directory of %s on %s: %w", runID, t.Name, err)
			}
			if alive {
				return fmt.Errorf("remove run directory of %s on %s: %w", runID, t.Name, ErrRunLive)
			}
		}
	}
	record := path.Join(h.work, "runs", ".box", runID+".json")
	// chmod -R does not follow the links it meets inside dir (only one named on its command
	// line: dir itself is left alone if it is one), nor does rm -rf.
	q := remote.Join(dir)
	line := "[ -L " + q + " ] || chmod -R u+rwx -- " + q + " 2>/dev/null; rm -rf -- " + q + " && rm -f -- " + remote.Join(record)
	if _, err := remote.Output(ctx, h.client, line); err != nil {
		return fmt.Errorf("remove run directory of %s on %s: %w", runID, t.Name, err)
	}
	return nil
}
