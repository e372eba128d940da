package runbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Reap ends every process the run in dir left behind, from outside the run: by whoever notices
// its supervisor is gone (the backend, the agent, `hangar reap` on an SSH host). It is
// idempotent: a second call ends what appeared since and reports the first count.
func Reap(ctx context.Context, runID, dir string) (Reaped, error) {
	path := RecordPath(dir)
	rec := record{RunID: runID}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &rec); err != nil {
			return Reaped{}, fmt.Errorf("read %s: %w", path, err)
		}
		if rec.RunID != runID {
			return Reaped{}, fmt.Errorf("%s belongs to run %q, not %q", path, rec.RunID, runID)
		}
	case errors.Is(err, os.ErrNotExist):
		// The supervisor died before it made the box, so before it started any process.
	default:
		return Reaped{}, fmt.Errorf("read %s: %w", path, err)
	}
	if rec.Cgroup != nil && !rec.Cgroup.valid(cgroupName(runID, rec.Marker)) {
		rec.Cgroup = nil
	}
	r := end(ctx, rec)
	if rec.Reaped != nil {
		r = *rec.Reaped
	} else if data != nil {
		rec.Reaped = &r
		if b, err := json.MarshalIndent(rec, "", "  "); err == nil {
			_ = os.WriteFile(path, b, 0o600)
		}
	}
	return r, nil
}

// end kills the run's leftovers: the cgroup (atomically where it can), then processes that left
// it but carry the marker, a few rounds in case one forked meanwhile; then its containers.
func end(ctx context.Context, rec record) Reaped {
	keep := ancestry()
	ended := map[int]bool{}
	for round := 0; round < 5; round++ {
		// One look at every process's environment per round (it is most of what ending a box
		// costs): taken before the cgroup is killed, so that the sandbox's own processes are
		// still there to be told apart. A marked process that forks after the look is found
		// by the next round, which runs whenever this one ended something.
		seen := marked(rec.Marker)
		wrappers := sandboxes(rec, seen)
		var pids []int
		if rec.Cgroup != nil {
			pids = append(pids, rec.Cgroup.kill(keep)...)
		}
		rest := without(without(seen, keep), setOf(pids))
		killEach(rest)
		waitGone(rest, 5*time.Second)
		pids = append(pids, rest...)
		if len(pids) == 0 && (round > 0 || rec.Cgroup != nil) {
			break
		}
		if len(pids) == 0 {
			// Without a cgroup, once more in a moment: a process in the middle of an exec
			// shows no environment.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		for _, h := range rec.Holder {
			wrappers[h] = true
		}
		for _, p := range pids {
			if !wrappers[p] { // Hangar's own sandbox process is not the run's
				ended[p] = true
			}
		}
	}
	if rec.Cgroup != nil {
		_ = rec.Cgroup.remove()
	}
	r := Reaped{Processes: len(ended), Time: time.Now().UTC()}
	for _, c := range rec.Containers {
		if removeContainer(ctx, c) {
			r.Containers++
		}
	}
	return r
}

// removeContainer removes a run's container; it reports whether one was still there.
func removeContainer(ctx context.Context, c Container) bool {
	if filepath.Base(c.Runtime) != "podman" && filepath.Base(c.Runtime) != "docker" {
		return false // a tampered record: only a container runtime is run
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if exec.CommandContext(ctx, c.Runtime, "container", "exists", c.Name).Run() != nil &&
		filepath.Base(c.Runtime) == "podman" {
		return false
	}
	return exec.CommandContext(ctx, c.Runtime, "rm", "-f", "--", c.Name).Run() == nil
}

// sandboxes are the box's bubblewrap processes among seen (the marked ones) and the cgroup's,
// read before they are killed.
func sandboxes(rec record, seen []int) map[int]bool {
	out := map[int]bool{}
	if rec.Sandbox == "" {
		return out
	}
	pids := append([]int(nil), seen...)
	if rec.Cgroup != nil {
		pids = append(pids, rec.Cgroup.procs()...)
	}
	for _, pid := range pids {
		if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); err == nil && exe == rec.Sandbox {
			out[pid] = true
		}
	}
	return out
}

// ReapedIn reads what the reaper recorded in a box record (see RecordPath), nil when nothing
// was reaped: for a backend that reads the record from another machine.
func ReapedIn(data []byte) *Reaped {
	var rec record
	if json.Unmarshal(data, &rec) != nil {
		return nil
	}
	return rec.Reaped
}

func setOf(pids []int) map[int]bool {
	out := make(map[int]bool, len(pids))
	for _, p := range pids {
		out[p] = true
	}
	return out
}
