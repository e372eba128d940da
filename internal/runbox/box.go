package runbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options describe the box of one run on a node.
type Options struct {
	RunID string
	// Dir is the run's directory on the node. The box's record is kept beside it, out of the
	// run's reach (see RecordPath).
	Dir string
	// Hide are directories the run's processes must not see (the workspace's home, the node's
	// work directory with other runs and tokens); Share are paths under them shown again
	// read-write (the run's own directory, the environment cache), ReadOnly read-only (the
	// hangar binary).
	Hide, Share, ReadOnly []string
	Sandbox               Mode
	// User, when set, is who the sandboxed commands run as (see RunUser); the caller gives it
	// the folders the run writes (Chown). Without a sandbox the commands run as the caller.
	User *User
	// NoCgroup leaves the processes where they are started: under an engine that tracks a job's
	// processes itself (Slurm), moving them out of its cgroup would hide them from it.
	NoCgroup bool
}

// Box is where a run's processes are started on a node, and how they all end.
type Box struct {
	runID string
	path  string // the record
	sb    *sandbox
	cgFD  int // open cgroup v2 directory for CLONE_INTO_CGROUP, or -1

	mu  sync.Mutex
	rec record
}

// record is what a reaper needs once the supervisor is gone.
type record struct {
	RunID      string      `json:"run_id"`
	Marker     string      `json:"marker"`
	Cgroup     *cgroup     `json:"cgroup,omitempty"`
	Containers []Container `json:"containers,omitempty"`
	Sandbox    string      `json:"sandbox,omitempty"`
	// Holder are the processes that hold the box's PID namespace: the box's own, not the run's.
	Holder []int `json:"holder,omitempty"`
	// Reaped is set once the leftovers were ended, so a later reaper reports the same count.
	Reaped *Reaped `json:"reaped,omitempty"`
}

// Container is a container a run started (its processes live in the runtime's cgroups, not the
// run's, so it is removed through the runtime).
type Container struct {
	Runtime string `json:"runtime"`
	Name    string `json:"name"`
}

// Reaped is what ending a run's leftovers did.
type Reaped struct {
	Processes  int       `json:"processes"`
	Containers int       `json:"containers"`
	Time       time.Time `json:"time"`
}

// String says what was ended, for a run's status reason.
func (r Reaped) String() string {
	if r.Processes == 0 && r.Containers == 0 {
		return "no process of the run was left running"
	}
	s := plural(r.Processes, "leftover process", "leftover processes")
	if r.Containers > 0 {
		s += " and " + plural(r.Containers, "container", "containers")
	}
	return "ended " + s + " of the run"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// RecordPath is where the box of the run in dir is recorded: beside the run's directory, which
// the run can write, so that a run cannot point its reaper at other processes.
func RecordPath(dir string) string {
	return filepath.Join(filepath.Dir(dir), ".box", filepath.Base(dir)+".json")
}

// cgroupName is the box's cgroup directory name: the run's id and the box's own marker, since
// several boxes of one run may share a machine (the nodes of a multi-node run on one host).
func cgroupName(runID, marker string) string {
	return "hangar-run-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, runID) + "-" + strings.ToLower(marker)
}

// Open makes the run's box: its cgroup, its sandbox, and its record. Warnings say what it could
// not do (they belong on the run); an error means the run must not start (the sandbox is
// required and does not work here).
func Open(ctx context.Context, o Options) (*Box, []string, error) {
	b := &Box{runID: o.RunID, path: RecordPath(o.Dir), cgFD: -1, rec: record{RunID: o.RunID, Marker: rand.Text()}}
	var warnings []string
	if !o.NoCgroup {
		cg, err := newCgroup(cgroupName(o.RunID, b.rec.Marker))
		if cg != nil {
			b.rec.Cgroup = cg
			if cg.V2 {
				if fd, err := syscall.Open(cg.Path, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
					b.cgFD = fd
				}
			}
		} else if err != nil {
			warnings = append(warnings, fmt.Sprintf("no cgroup for the run's processes (%v): they are tracked by the %s variable only", err, MarkerVar))
		}
	}
	if o.Sandbox != SandboxOff {
		sb, pidErr, err := b.openSandbox(ctx, o)
		if pidErr != nil && o.Sandbox == SandboxRequired { // the boundary holds whole, or not at all
			sb.end()
			sb, err = nil, fmt.Errorf("no PID namespace: %w", pidErr)
		}
		switch {
		case err != nil && o.Sandbox == SandboxRequired:
			b.Close()
			return nil, warnings, fmt.Errorf("the sandbox is required: %w", err)
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("the workspace's files are not hidden from this run: %v", err))
		default:
			b.sb, b.rec.Sandbox = sb, sb.bwrap
			if sb.pidns != nil {
				b.rec.Holder = sb.pidns.pids
			}
		}
		if pidErr != nil && b.sb != nil {
			warnings = append(warnings, fmt.Sprintf("the node's other processes are visible to this run: %v", pidErr))
		}
	}
	if err := b.save(); err != nil {
		b.Close()
		return nil, warnings, err
	}
	return b, warnings, nil
}

// openSandbox makes the box's sandbox and its PID namespace. Starting the namespace's holder is
// the check that bubblewrap works here; only where it fails is bubblewrap probed without one,
// and then the sandbox is kept without a PID namespace (pidErr says why).
func (b *Box) openSandbox(ctx context.Context, o Options) (sb *sandbox, pidErr, err error) {
	if sb, err = newSandbox(ctx, o.Hide, o.Share, o.ReadOnly, o.User); err != nil {
		return nil, nil, err
	}
	if sb.bash == "" {
		return sb, errors.New("the node has no bash to hold one"), nil
	}
	h, pidErr := sb.startHolder([]string{"PATH=" + os.Getenv("PATH"), MarkerVar + "=" + b.rec.Marker}, b.cgFD)
	if pidErr == nil {
		sb.pidns = h
		return sb, nil, nil
	}
	if err := sb.probe(ctx); err != nil {
		return nil, nil, err
	}
	return sb, pidErr, nil
}

// Sandboxed reports whether the run's commands run in the sandbox.
func (b *Box) Sandboxed() bool { return b.sb != nil }

// Command prepares a run's process: in the sandbox (unless bare, for a container runtime that
// isolates it itself), in its own process group, started straight into the run's cgroup where
// cgroup v2 allows it.
func (b *Box) Command(bare bool, dir string, env []string, name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if b.sb != nil && !bare {
		cmd = exec.Command(b.sb.bwrap, b.sb.args(dir, name, args)...)
		if b.sb.pidns != nil {
			cmd.ExtraFiles = b.sb.pidns.files()
		}
	} else {
		cmd = exec.Command(name, args...)
	}
	if env == nil {
		env = os.Environ()
	}
	cmd.Dir, cmd.Env = dir, append(env[:len(env):len(env)], MarkerVar+"="+b.rec.Marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if b.cgFD >= 0 {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, b.cgFD
	}
	return cmd
}

// Started puts a started process into the run's cgroup where it could not be started in it.
func (b *Box) Started(cmd *exec.Cmd) error {
	if b.rec.Cgroup == nil || b.cgFD >= 0 || cmd.Process == nil {
		return nil
	}
	if err := b.rec.Cgroup.add(cmd.Process.Pid); err != nil {
		return fmt.Errorf("move process %d into the run's cgroup: %w", cmd.Process.Pid, err)
	}
	return nil
}

// AddContainer records a container the run started.
func (b *Box) AddContainer(runtime, name string) error {
	b.mu.Lock()
	b.rec.Containers = append(b.rec.Containers, Container{Runtime: runtime, Name: name})
	b.mu.Unlock()
	return b.save()
}

// Signal sends sig to a process group the box started. In the sandbox, bubblewrap's own process
// (the group's leader) would die of a SIGTERM at once and leave the command behind, so signals
// other than SIGKILL go to the other members only; bubblewrap exits with the command.
func (b *Box) Signal(pgid int, sig syscall.Signal) {
	if b.sb == nil || sig == syscall.SIGKILL || !b.isSandbox(pgid) {
		_ = syscall.Kill(-pgid, sig)
		return
	}
	for _, pid := range groupMembers(pgid) {
		if pid != pgid {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// isSandbox reports whether a process is bubblewrap (a bare command's group has none).
func (b *Box) isSandbox(pid int) bool {
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return err == nil && exe == b.sb.bwrap
}

// End ends whatever the run's commands left running (daemons, escaped process groups,
// containers) and removes the cgroup. It never ends the caller or its ancestors.
func (b *Box) End(ctx context.Context) Reaped {
	b.mu.Lock()
	rec := b.rec
	b.mu.Unlock()
	r := end(ctx, rec)
	b.Close()
	return r
}

// User is who the box's sandboxed commands run as; nil: the caller's own user.
func (b *Box) User() *User {
	if b.sb == nil {
		return nil
	}
	return b.sb.user
}

// UserEnv is HOME (home), USER and LOGNAME of the box's run user, for its commands' environment;
// nil when they run as the caller.
func (b *Box) UserEnv(home string) []string {
	u := b.User()
	if u == nil {
		return nil
	}
	name := u.Name
	if name == "" {
		name = strconv.Itoa(u.UID)
	}
	return []string{"HOME=" + home, "USER=" + name, "LOGNAME=" + name}
}

// Close ends the box's PID namespace (and with it whatever is left in it) and releases the
// box's open cgroup directory.
func (b *Box) Close() {
	b.sb.end()
	if b.cgFD >= 0 {
		_ = syscall.Close(b.cgFD)
		b.cgFD = -1
	}
}

func (b *Box) save() error {
	b.mu.Lock()
	data, err := json.MarshalIndent(b.rec, "", "  ")
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return fmt.Errorf("record the run's box: %w", err)
	}
	tmp := b.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("record the run's box: %w", err)
	}
	return os.Rename(tmp, b.path)
}
