package runbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroup is one run's control group: on cgroup v2 it is ended with cgroup.kill, on v1 it lives in
// the freezer hierarchy so its processes can be frozen, killed and thawed without a fork racing
// the kill.
type cgroup struct {
	Path string `json:"path"`
	V2   bool   `json:"v2,omitempty"`
}

// newCgroup makes the run's cgroup beside the caller's own: cgroup v2 where a cgroup2 file system
// is mounted and writable, else the v1 freezer hierarchy; nil when neither can be made (no
// permission, no cgroup file system), and the caller falls back on the environment marker.
func newCgroup(name string) (*cgroup, error) {
	var errs []error
	if mnt := mountOf("cgroup2", ""); mnt != "" {
		cg := &cgroup{Path: filepath.Join(mnt, ownCgroup("0", ""), name), V2: true}
		if err := os.Mkdir(cg.Path, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			return cg, nil
		} else {
			errs = append(errs, err)
		}
	}
	if mnt := mountOf("cgroup", "freezer"); mnt != "" {
		cg := &cgroup{Path: filepath.Join(mnt, ownCgroup("", "freezer"), name)}
		if err := os.Mkdir(cg.Path, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			return cg, nil
		} else {
			errs = append(errs, err)
		}
	}
	return nil, errors.Join(errs...)
}

// mountOf finds where a cgroup file system is mounted (for v1, the hierarchy with the controller).
func mountOf(fstype, controller string) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != fstype {
			continue
		}
		if controller == "" || hasOption(qf[2], controller) {
			return pf[4]
		}
	}
	return ""
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// ownCgroup is this process's cgroup path in a hierarchy: v2 is the "0::" line, v1 the line
// naming the controller.
func ownCgroup(id, controller string) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "/"
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if (id != "" && f[0] == id && f[1] == "") || (controller != "" && hasOption(f[1], controller)) {
			return f[2]
		}
	}
	return "/"
}

// add moves a process into the cgroup.
func (c *cgroup) add(pid int) error {
	return os.WriteFile(filepath.Join(c.Path, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// procs lists the processes in the cgroup (none when it is gone).
func (c *cgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(c.Path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// kill ends every process in the cgroup except those in keep, and returns the pids it ended.
// cgroup v2 kills atomically with cgroup.kill; v1 freezes the group first so that nothing forks
// between reading the list and the kill.
func (c *cgroup) kill(keep map[int]bool) []int {
	all := c.procs()
	pids := without(all, keep)
	if len(pids) == 0 {
		return nil
	}
	switch {
	case c.V2 && len(pids) == len(all) && c.write("cgroup.kill", "1") == nil:
	case c.V2:
		killEach(pids)
	default:
		frozen := c.write("freezer.state", "FROZEN") == nil && c.waitState("FROZEN")
		pids = without(c.procs(), keep)
		killEach(pids)
		if frozen {
			_ = c.write("freezer.state", "THAWED") // a frozen process dies only once thawed
		}
	}
	waitGone(pids, 5*time.Second)
	return pids
}

func (c *cgroup) write(file, v string) error {
	return os.WriteFile(filepath.Join(c.Path, file), []byte(v), 0o644)
}

func (c *cgroup) waitState(want string) bool {
	for i := 0; i < 100; i++ {
		b, err := os.ReadFile(filepath.Join(c.Path, "freezer.state"))
		if err != nil {
			return false
		}
		if strings.TrimSpace(string(b)) == want {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// remove deletes the cgroup once it is empty.
func (c *cgroup) remove() error {
	var err error
	for i := 0; i < 50; i++ {
		if err = syscall.Rmdir(c.Path); err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", c.Path, err)
}

// valid reports whether a recorded cgroup is one this package made for the run: a record is read
// back from disk, and a path elsewhere (a whole hierarchy) must never be killed.
func (c *cgroup) valid(name string) bool {
	if c == nil || filepath.Base(c.Path) != name || !filepath.IsAbs(c.Path) || filepath.Clean(c.Path) != c.Path {
		return false
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(c.Path, &st); err != nil {
		return false
	}
	const cgroup2Magic, cgroupMagic = 0x63677270, 0x27e0eb
	return st.Type == cgroup2Magic || st.Type == cgroupMagic
}

func without(pids []int, keep map[int]bool) []int {
	var out []int
	for _, p := range pids {
		if !keep[p] {
			out = append(out, p)
		}
	}
	return out
}
