package runbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/node"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// needs fails the test when CI is set (the project's scripts install what it needs) and skips it
// otherwise.
func needs(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required with CI set", what)
	}
	t.Skipf("needs %s", what)
}

func newRun(t *testing.T) (id, dir string) {
	t.Helper()
	id = "run-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000")
	dir = filepath.Join(t.TempDir(), "runs", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return id, dir
}

// start runs a shell script in the box as a supervisor would, with the run's marker.
func start(t *testing.T, b *Box, id, script string) *exec.Cmd {
	t.Helper()
	cmd := b.Command(false, "", os.Environ(), "bash", "-c", script)
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Started(cmd); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	return cmd
}

func alive(pid int) bool {
	st, ok := node.Stat(pid)
	return ok && st.State != 'Z'
}

// pidsOf reads the pids a script wrote, one per line, once there are n.
func pidsOf(t *testing.T, file string, n int) []int {
	t.Helper()
	var pids []int
	testwait.Within(t, 20*time.Second, "the script's pids", func() bool {
		b, _ := os.ReadFile(file)
		pids = nil
		for _, f := range strings.Fields(string(b)) {
			var p int
			if _, err := fmtSscan(f, &p); err == nil {
				pids = append(pids, p)
			}
		}
		return len(pids) >= n
	})
	return pids
}

func TestReapEndsWhatTheRunLeftBehind(t *testing.T) {
	id, dir := newRun(t)
	b, _, err := Open(t.Context(), Options{RunID: id, Dir: dir, Sandbox: SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pidFile := filepath.Join(t.TempDir(), "pids")
	// A background child, one in a new session (out of the process group), and one that ignores
	// SIGTERM: a supervisor's process-group kill would miss the second.
	script := `sleep 300 & echo $! >> ` + pidFile + `
setsid sleep 301 & echo $! >> ` + pidFile + `
(trap "" TERM; sleep 302) & echo $! >> ` + pidFile + `
echo $$ >> ` + pidFile + `
wait`
	start(t, b, id, script)
	pids := pidsOf(t, pidFile, 4)

	// An unrelated process of the same user must survive.
	bystander := exec.Command("sleep", "300")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer bystander.Process.Kill()

	// The supervisor is gone (it never ran End): whoever notices reaps.
	r, err := Reap(t.Context(), id, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d of the run still runs after Reap", p)
		}
	}
	if r.Processes < len(pids) {
		t.Errorf("Reap ended %d processes, want at least %d", r.Processes, len(pids))
	}
	if !alive(bystander.Process.Pid) {
		t.Error("Reap killed a process that is not the run's")
	}
	if !strings.Contains(r.String(), "leftover processes") {
		t.Errorf("reason %q", r.String())
	}
	again, err := Reap(t.Context(), id, dir)
	if err != nil || again.Processes != r.Processes {
		t.Errorf("second Reap = %+v, %v; want the first count %d", again, err, r.Processes)
	}
}

// A process that scrubbed its environment and left the process group is still ended through the
// run's cgroup.
func TestReapUsesTheCgroup(t *testing.T) {
	id, dir := newRun(t)
	b, warns, err := Open(t.Context(), Options{RunID: id, Dir: dir, Sandbox: SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	needs(t, b.rec.Cgroup != nil, "a writable cgroup file system (root): "+strings.Join(warns, "; "))
	pidFile := filepath.Join(t.TempDir(), "pids")
	start(t, b, id, `setsid env -i /bin/sleep 303 & echo $! >> `+pidFile+`; wait`)
	pid := pidsOf(t, pidFile, 1)[0]
	testwait.Within(t, 20*time.Second, "env -i to exec sleep", func() bool {
		c, _ := os.ReadFile(filepath.Join("/proc", itoa(pid), "cmdline"))
		return strings.HasPrefix(string(c), "/bin/sleep")
	})
	if len(marked(b.rec.Marker)) != 1 { // only bash still carries the marker
		t.Fatalf("marked = %v, want only the shell", marked(b.rec.Marker))
	}
	r, err := Reap(t.Context(), id, dir)
	if err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Fatalf("process %d left the cgroup's reach: Reap = %+v", pid, r)
	}
	if _, err := os.Stat(b.rec.Cgroup.Path); !os.IsNotExist(err) {
		t.Errorf("cgroup %s not removed: %v", b.rec.Cgroup.Path, err)
	}
}

// A record the run could have tampered with must not turn the reaper on other processes.
func TestReapRefusesAForeignRecord(t *testing.T) {
	id, dir := newRun(t)
	path := RecordPath(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(rec record) {
		b, _ := json.Marshal(rec)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(record{RunID: "another-run"})
	if _, err := Reap(t.Context(), id, dir); err == nil {
		t.Error("Reap accepted another run's record")
	}
	mnt := mountOf("cgroup2", "")
	needs(t, mnt != "", "a cgroup2 mount")
	write(record{RunID: id, Cgroup: &cgroup{Path: mnt, V2: true}})
	if (&cgroup{Path: mnt, V2: true}).valid(cgroupName(id, "")) {
		t.Fatal("the whole cgroup hierarchy passed as the run's cgroup")
	}
	if _, err := Reap(t.Context(), id, dir); err != nil {
		t.Fatal(err)
	}
	if os.Getppid() <= 1 || !alive(os.Getppid()) {
		t.Fatal("the reaper killed outside the run")
	}
}

// End, called by a supervisor when its command is done, ends leftovers but never the caller.
func TestEndSparesTheCaller(t *testing.T) {
	id, dir := newRun(t)
	b, _, err := Open(t.Context(), Options{RunID: id, Dir: dir, Sandbox: SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(MarkerVar, b.rec.Marker) // as if the supervisor had been started from inside the run
	pidFile := filepath.Join(t.TempDir(), "pids")
	start(t, b, id, `setsid sleep 300 & echo $! >> `+pidFile+`; exit 0`)
	pid := pidsOf(t, pidFile, 1)[0]
	r := b.End(context.Background())
	if alive(pid) || r.Processes < 1 {
		t.Errorf("End = %+v; leftover %d alive: %v", r, pid, alive(pid))
	}
	if syscall.Kill(os.Getpid(), 0) != nil {
		t.Fatal("unreachable")
	}
}

// Two nodes of one run on the same machine have a box each: one ending its leftovers leaves the
// other's processes alone.
func TestBoxesOfOneRunAreSeparate(t *testing.T) {
	id, dir0 := newRun(t)
	dir1 := filepath.Join(t.TempDir(), "node1", "runs", id)
	if err := os.MkdirAll(dir1, 0o755); err != nil {
		t.Fatal(err)
	}
	b0, _, err := Open(t.Context(), Options{RunID: id, Dir: dir0, Sandbox: SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	b1, _, err := Open(t.Context(), Options{RunID: id, Dir: dir1, Sandbox: SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	defer b1.End(context.Background())
	pidFile := filepath.Join(t.TempDir(), "pids")
	start(t, b1, id, `sleep 300 & echo $! >> `+pidFile+`; wait`)
	pid := pidsOf(t, pidFile, 1)[0]
	b0.End(context.Background())
	if !alive(pid) {
		t.Fatal("ending node 0's box killed node 1's process")
	}
}
