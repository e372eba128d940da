package runbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// Hiding prepares a command that runs name with args where the directories hide are empty and
// nothing else changes: a mount namespace only, with the caller's user and capabilities and no
// PID namespace (what it starts may outlive it). It is for programs the workspace's owners
// configured (a cluster's provider hooks), which need the machine as the server has it, agents
// they start included, but never the workspace's own files. Start it with StartHiding. Without
// bubblewrap it prepares the command unchanged and says why in err, for the caller to weigh
// against the node's mode.
func Hiding(hide []string, name string, args ...string) (cmd *exec.Cmd, err error) {
	var dirs []string
	for _, h := range clean(hide) {
		if st, err := os.Stat(h); err == nil && st.IsDir() {
			dirs = append(dirs, h)
		}
	}
	if len(dirs) == 0 {
		return exec.Command(name, args...), nil
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return exec.Command(name, args...), fmt.Errorf("bubblewrap (bwrap) is not installed on this node")
	}
	if real, err := filepath.EvalSymlinks(bwrap); err == nil {
		bwrap = real
	}
	out := []string{"--dev-bind", "/", "/"}
	if os.Geteuid() == 0 {
		out = append(out, "--cap-add", "ALL") // root's programs keep root's powers; only the files are hidden
	}
	for _, h := range dirs {
		out = append(out, "--tmpfs", h)
	}
	out = append(out, "--")
	if bash, err := exec.LookPath("bash"); err == nil {
		out = append(out, bash, "--posix", "-c", startedScript, "hangar-sandbox")
	}
	return exec.Command(bwrap, append(append(out, name), args...)...), nil
}

// StartHiding starts a command Hiding prepared, as Box.Start does: once it runs where the
// directories are hidden, setting that up again where bubblewrap lost a race with the mount
// table.
func StartHiding(cmd *exec.Cmd) (*exec.Cmd, error) {
	if !slices.Contains(cmd.Args, startedScript) {
		return cmd, cmd.Start()
	}
	return startSandboxed(cmd)
}
