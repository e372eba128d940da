package runbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Mode says whether a run's processes must be sandboxed.
type Mode string

// ModeEnv is the environment variable that sets a node's Mode (ParseMode reads it).
const ModeEnv = "HANGAR_SANDBOX"

const (
	// SandboxAuto sandboxes where bubblewrap works, and warns on the run where it does not.
	SandboxAuto Mode = "auto"
	// SandboxRequired fails the run where bubblewrap does not work.
	SandboxRequired Mode = "required"
	// SandboxOff never sandboxes (the run sees everything its user can read).
	SandboxOff Mode = "off"
)

// ParseMode reads a sandbox mode ("" is auto).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return SandboxAuto, nil
	case SandboxAuto, SandboxRequired, SandboxOff:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode %q: expected auto, required or off", s)
}

// sandbox is a bubblewrap invocation that shows the run the machine as its user sees it, except
// the hidden directories (each replaced by an empty tmpfs) with the shared ones bound back.
type sandbox struct {
	bwrap string
	// bash, where the node has it, starts the command inside the sandbox after telling Start on
	// fd 3 that bubblewrap set the sandbox up (see started.go); without it nothing is told.
	bash string
	// caps are the capabilities a root run keeps (nil: not root, bubblewrap drops them all).
	caps            []string
	hide, share, ro []string
	// user, when set, is who the commands run as (setpriv switches to it inside the sandbox);
	// blocked are the directories it could not search on the way to share and ro (user.go).
	user    *User
	setpriv string
	blocked []string
	// pidns holds the box's PID namespace (pidns.go); nil until the box opened it, and where
	// the node could not make one.
	pidns *holder
}

// keptCaps are the capabilities a run started as root keeps. Those left out would let it undo the
// sandbox or look past it: mount/umount (SYS_ADMIN), other processes' /proc/<pid>/root and fds
// (SYS_PTRACE), open_by_handle_at (DAC_READ_SEARCH), raw devices, modules, BPF and perf.
var keptCaps = map[int]string{
	0: "CAP_CHOWN", 1: "CAP_DAC_OVERRIDE", 3: "CAP_FOWNER", 4: "CAP_FSETID", 5: "CAP_KILL",
	6: "CAP_SETGID", 7: "CAP_SETUID", 10: "CAP_NET_BIND_SERVICE", 11: "CAP_NET_BROADCAST",
	12: "CAP_NET_ADMIN", 13: "CAP_NET_RAW", 14: "CAP_IPC_LOCK", 15: "CAP_IPC_OWNER",
	18: "CAP_SYS_CHROOT", 23: "CAP_SYS_NICE", 24: "CAP_SYS_RESOURCE", 26: "CAP_SYS_TTY_CONFIG",
	28: "CAP_LEASE", 29: "CAP_AUDIT_WRITE", 31: "CAP_SETFCAP",
}

// rootCaps is keptCaps within this process's bounding set (bubblewrap refuses a capability the
// caller cannot give), in a stable order.
func rootCaps(bounding uint64) []string {
	var out []string
	for bit := 0; bit < 64; bit++ {
		if name, ok := keptCaps[bit]; ok && bounding&(1<<bit) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// boundingSet reads CapBnd of this process.
func boundingSet() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapBnd:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n
		}
	}
	return 0
}

// args is the bubblewrap command line that runs name with args in dir.
func (s *sandbox) args(dir, name string, args []string) []string {
	out := s.mounts()
	if s.pidns != nil {
		out = append(out, s.pidns.joinArgs()...)
	}
	if dir != "" {
		out = append(out, "--chdir", dir)
	}
	out = append(out, "--")
	if s.bash != "" {
		out = append(out, s.bash, "--posix", "-c", startedScript, "hangar-sandbox")
	}
	if s.user != nil {
		out = append(out, s.setpriv, "--reuid="+strconv.Itoa(s.user.UID), "--regid="+strconv.Itoa(s.user.GID),
			"--clear-groups", "--")
	}
	out = append(out, name)
	return append(out, args...)
}

// mounts are the arguments that lay the sandbox's files out: the machine as it is, but for the
// hidden directories (and, for a run user, the directories it could not search) replaced by
// empty ones, with the shared paths bound back.
func (s *sandbox) mounts() []string {
	out := []string{"--dev-bind", "/", "/"}
	if s.caps != nil {
		out = append(out, "--cap-drop", "ALL")
		for _, c := range s.caps {
			out = append(out, "--cap-add", c)
		}
	}
	// Empty directories, outer ones first, and the folders on the way to what is made or bound
	// inside them made by hand: bubblewrap would make those 0700, which a run user could not
	// search.
	var made []string
	for _, d := range append(append([]string(nil), s.blocked...), byDepth(s.hide)...) {
		for _, dir := range between([]string{d}, made) {
			out = append(out, "--dir", dir)
		}
		out = append(out, "--tmpfs", d)
		made = append(made, d)
	}
	for _, d := range between(append(append([]string(nil), s.share...), s.ro...), made) {
		out = append(out, "--dir", d)
	}
	for _, sh := range s.share {
		out = append(out, "--bind", sh, sh)
	}
	for _, r := range s.ro {
		out = append(out, "--ro-bind", r, r)
	}
	return out
}

// byDepth is dirs, the outer ones first.
func byDepth(dirs []string) []string {
	out := append([]string(nil), dirs...)
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i], string(filepath.Separator)) < strings.Count(out[j], string(filepath.Separator))
	})
	return out
}

// between lists, parents first and once each, the directories strictly between each path and
// the innermost of roots above it.
func between(paths, roots []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		root := ""
		for _, r := range roots {
			if under(p, []string{r}) && len(r) > len(root) {
				root = r
			}
		}
		if root == "" {
			continue
		}
		var chain []string
		for d := filepath.Dir(p); d != root && under(d, []string{root}); d = filepath.Dir(d) {
			chain = append(chain, d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if !seen[chain[i]] {
				seen[chain[i]] = true
				out = append(out, chain[i])
			}
		}
	}
	return out
}

// newSandbox finds bubblewrap and checks it works here (user namespaces may be off for a user
// that is not root). Hidden directories that do not exist are left out, and so are shared ones
// that are not under a hidden one (they are visible anyway), unless the run user could not reach
// them. ro are shared read-only.
func newSandbox(ctx context.Context, hide, share, ro []string, u *User) (*sandbox, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("bubblewrap (bwrap) is not installed on this node")
	}
	if real, err := filepath.EvalSymlinks(bwrap); err == nil {
		bwrap = real // what /proc/<pid>/exe of its processes shows
	}
	s := &sandbox{bwrap: bwrap, user: u}
	if bash, err := exec.LookPath("bash"); err == nil {
		s.bash = bash
	}
	if os.Geteuid() == 0 {
		s.caps = rootCaps(boundingSet())
	}
	if u != nil {
		if s.setpriv, err = exec.LookPath("setpriv"); err != nil {
			return nil, fmt.Errorf("runs execute as %s, which needs setpriv (util-linux) on this node", u)
		}
	}
	for _, h := range clean(hide) {
		if st, err := os.Stat(h); err == nil && st.IsDir() {
			s.hide = append(s.hide, h)
		}
	}
	if u != nil {
		s.blocked = blockedAncestors(append(clean(share), clean(ro)...), s.hide, u)
	}
	visible := func(paths []string) []string {
		var out []string
		for _, p := range clean(paths) {
			if _, err := os.Stat(p); err == nil && (under(p, s.hide) || under(p, s.blocked)) {
				out = append(out, p)
			}
		}
		return out
	}
	s.share, s.ro = visible(share), visible(ro)
	if s.bash != "" {
		return s, nil // the box's PID namespace holder is the probe (Open)
	}
	if err := s.probe(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// end ends the sandbox's PID namespace, if it has one.
func (s *sandbox) end() {
	if s != nil && s.pidns != nil {
		s.pidns.end()
		s.pidns = nil
	}
}

// probe checks that bubblewrap sets the sandbox up here, trying again as Start does where the
// machine's mount table changed under it.
func (s *sandbox) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var err error
	for attempt := 1; attempt <= setupAttempts; attempt++ {
		var out []byte
		if out, err = exec.CommandContext(ctx, s.bwrap, s.args("", "true", nil)...).CombinedOutput(); err == nil {
			return nil
		}
		err = fmt.Errorf("bubblewrap does not work on this node: %v: %s", err, strings.TrimSpace(string(out)))
		if !sleepCtx(ctx, retryPause(attempt)) {
			break
		}
	}
	return err
}

func clean(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				abs = real
			}
			out = append(out, abs)
		}
	}
	return out
}

// under reports whether p is inside one of dirs.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}
