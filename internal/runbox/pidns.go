package runbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A box's sandboxed commands share one PID namespace with a /proc of its own: a run sees its
// own processes and nothing else of the node (not the server, not its supervisor, not bubblewrap
// outside the sandbox, not other runs), so no /proc/<pid>/root, environ or cwd leads out of the
// sandbox. All of a run's processes on a node are in the one namespace, as on a machine of their
// own, so ranks that look each other up by pid (NCCL, Open MPI's shared memory) still can.
//
// The namespace is held by a holder: a sandbox started when the box opens, whose process waits
// until the box ends it (Box.Close, or whoever ends the box's processes: End, Reap). Every command
// joins the holder's namespace (and, where bubblewrap made one, its user namespace). When the
// holder ends, the kernel ends every process left in the namespace. A supervisor that dies does
// not end it: as before there was a namespace, whoever notices the loss ends the run's processes
// (and a replica's scoring server can drain what it was answering meanwhile).

// holderScript tells the box on fd 3 that the holder's sandbox is set up, then waits for ever:
// its input is a pipe whose other end it holds itself (fd 5), so it never ends.
const holderScript = `printf x >&3; exec 3>&- 4>&-; read -r _`

// Fds of a sandboxed command: 3 tells Start that the sandbox is set up, 4 and 5 are the holder's
// PID and user namespaces.
const (
	pidnsFD  = 4
	usernsFD = 5
)

type holder struct {
	cmd  *exec.Cmd
	ns   []*os.File // its PID namespace, then its user namespace where bubblewrap made one
	pids []int      // bubblewrap's processes and the waiting shell: the box's, not the run's
}

// startHolder starts the holder in the sandbox, into the box's cgroup (cgFD, or -1), and returns
// once its namespace can be joined.
func (s *sandbox) startHolder(env []string, cgFD int) (*holder, error) {
	var err error
	for attempt := 1; attempt <= setupAttempts; attempt++ {
		var h *holder
		if h, err = s.tryHolder(env, cgFD); err == nil {
			return h, nil
		}
		time.Sleep(retryPause(attempt))
	}
	return nil, fmt.Errorf("no PID namespace for the run: %w", err)
}

func (s *sandbox) tryHolder(env []string, cgFD int) (*holder, error) {
	in, hold, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer in.Close()
	defer hold.Close() // the holder keeps its own copy
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer infoR.Close()
	args := append(s.mounts(), "--unshare-pid", "--proc", "/proc", "--info-fd", "4", "--",
		s.bash, "--posix", "-c", holderScript, "hangar-pidns")
	cmd := exec.Command(s.bwrap, args...)
	cmd.Env, cmd.Dir = env, "/"
	var errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, io.Discard, &errOut
	cmd.ExtraFiles = []*os.File{nil, infoW, hold} // fd 3: Start's, as for any command
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cgFD >= 0 {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, cgFD
	}
	started, err := startListening(cmd)
	infoW.Close()
	if err != nil {
		return nil, err
	}
	h := &holder{cmd: cmd}
	fail := func(err error) (*holder, error) {
		h.end()
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(errOut.String()))
	}
	if !started {
		return fail(fmt.Errorf("bubblewrap exited before the sandbox was set up"))
	}
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if b, err := io.ReadAll(infoR); err != nil || json.Unmarshal(b, &info) != nil || info.ChildPID <= 0 {
		return fail(fmt.Errorf("bubblewrap did not say which process holds the namespace"))
	}
	names := []string{"pid"}
	if s.caps == nil { // not root: bubblewrap made a user namespace, which the commands join too
		names = append(names, "user")
	}
	for _, n := range names {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(info.ChildPID), "ns", n))
		if err != nil {
			return fail(fmt.Errorf("open the sandbox's %s namespace: %w", n, err))
		}
		h.ns = append(h.ns, f)
	}
	h.pids = append([]int{cmd.Process.Pid, info.ChildPID}, children(info.ChildPID)...)
	return h, nil
}

// children lists a process's children (the holder's waiting shell).
func children(pid int) []int {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// files are the ExtraFiles of a command joining the namespace: fd 3 left for Start, then the
// namespaces.
func (h *holder) files() []*os.File {
	return append([]*os.File{nil}, h.ns...)
}

// joinArgs are bubblewrap's arguments for a command joining the namespace.
func (h *holder) joinArgs() []string {
	out := []string{"--pidns", strconv.Itoa(pidnsFD)}
	if len(h.ns) > 1 {
		out = append(out, "--userns", strconv.Itoa(usernsFD))
	}
	return append(out, "--proc", "/proc")
}

// end ends the holder and waits for it: the kernel then ends whatever is left in its namespace.
func (h *holder) end() {
	if h == nil {
		return
	}
	for _, f := range h.ns {
		f.Close()
	}
	h.ns = nil
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL) // bubblewrap, the namespace's init, the shell
	_ = h.cmd.Wait()
}
