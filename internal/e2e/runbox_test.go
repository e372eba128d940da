package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// supervisorPID reads the pid of a local run's supervisor from its handle.
func supervisorPID(t *testing.T, runDir string) int {
	t.Helper()
	var h struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(runDir, "handle.json"))), &h); err != nil || h.PID <= 0 {
		t.Fatalf("handle of %s: %v %+v", runDir, err, h)
	}
	return h.PID
}

func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil && !zombie(pid)
}

// A supervisor killed with SIGKILL leaves its command running (a GPU stays held); the backend that
// notices the loss ends the run's whole tree (its PID namespace, one process in a session of its
// own included), and job show says how many processes it ended.
func TestKilledSupervisorLeavesNothingRunning(t *testing.T) {
	w := newWS(t, "--stale-after", "2s")
	dir := t.TempDir()
	tag := sleepTag() // the processes are found by their command line: pids inside the run are its namespace's
	writeFiles(t, dir, map[string]string{"job.yml": `command: >-
  setsid sleep 301` + tag + ` & echo started; exec sleep 300` + tag + `
`})
	name := w.create(filepath.Join(dir, "job.yml"))
	w.waitStatus(name, 60*time.Second, job.Running)
	runDir := filepath.Join(w.home, "local", "runs", name)
	pids := pidsRunning(t, tag, 2)
	sup := supervisorPID(t, runDir)
	if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d := w.waitStatus(name, 90*time.Second, job.Failed)
	if !strings.Contains(d.StatusReason, "ended 2 leftover processes of the run") {
		t.Errorf("reason %q does not say the 2 processes were ended", d.StatusReason)
	}
	for _, p := range pids {
		if processAlive(p) {
			t.Errorf("process %d of the run outlived its supervisor", p)
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// sleepTag is a fraction of a second unique to the test, so that `sleep 300<tag>` names its
// process in /proc.
func sleepTag() string { return fmt.Sprintf(".%09d", time.Now().UnixNano()%1e9) }

// pidsRunning waits for n processes whose command line holds tag, and returns their pids as this
// machine numbers them.
func pidsRunning(t *testing.T, tag string, n int) []int {
	t.Helper()
	var pids []int
	testwait.Within(t, 60*time.Second, fmt.Sprintf("%d processes with %q in their command line", n, tag), func() bool {
		pids = nil
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, _ := os.ReadFile(p)
			if strings.Contains(string(b), tag) && strings.HasPrefix(string(b), "sleep") {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
					pids = append(pids, pid)
				}
			}
		}
		return len(pids) >= n
	})
	return pids
}

// A run on the local target reads what its user can, except the workspace's secrets and the other
// runs' directories. The same job on a node with the sandbox off shows the probe would see them.
func TestRunCannotReadWorkspaceSecrets(t *testing.T) {
	probe := func(t *testing.T, env []string) (log, warnings, name string) {
		w := newWSEnv(t, env)
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			"other.yml": "command: sleep 300\n",
			"probe.sh": `WS=$1; SERVER=$2
for f in token secret.key workspace.db server.json server.log; do
  head -c 64 "$WS/$f" >/dev/null 2>&1 && echo "READ $f"
done
echo "RUNS: $(ls "$WS/local/runs" 2>&1 | tr '\n' ' ')"
for d in "$WS"/local/runs/*/; do
  [ "$d" = "$(cd .. && pwd)/" ] && continue
  cat "$d/supervisor.json" >/dev/null 2>&1 && echo "READ another run's token"
done
cat "/proc/$SERVER/environ" >/dev/null 2>&1 && echo "READ the server's environment"
head -c 8 "/proc/$SERVER/root$WS/secret.key" >/dev/null 2>&1 && echo "READ through /proc/<server>/root"
ls "/proc/$SERVER/fd/" >/dev/null 2>&1 && for fd in /proc/$SERVER/fd/*; do head -c 1 "$fd" >/dev/null 2>&1 && echo "READ a server fd" && break; done
ls ../supervisor.json >/dev/null && head -c 1 ../user_logs/std_log.txt >/dev/null && echo "OWN run dir readable"
ls /etc/hostname >/dev/null && echo "MACHINE readable"
`,
			"job.yml": "command: bash probe.sh ${{inputs.ws}} ${{inputs.server}}\ncode: .\ninputs:\n  ws: " + w.home +
				"\n  server: " + strconv.Itoa(w.server.Process.Pid) + "\n",
		})
		other := w.create(filepath.Join(dir, "other.yml"))
		w.waitStatus(other, 60*time.Second, job.Running)
		name = w.create(filepath.Join(dir, "job.yml"))
		d := w.waitStatus(name, 60*time.Second, job.Completed, job.Failed)
		return w.logs(name), strings.Join(d.Warnings, "\n"), name
	}

	t.Run("sandboxed", func(t *testing.T) {
		log, warnings, name := probe(t, nil)
		if strings.Contains(log, "READ") {
			t.Errorf("the run read the workspace's secrets:\n%s", log)
		}
		if !strings.Contains(log, "OWN run dir readable") || !strings.Contains(log, "MACHINE readable") {
			t.Errorf("the run lost sight of its own directory or the machine:\n%s", log)
		}
		if !strings.Contains(log, "RUNS: "+name+" \n") {
			t.Errorf("the run sees other runs' directories (want only %s):\n%s", name, log)
		}
		if warnings != "" {
			t.Errorf("warnings on a sandboxed run: %s", warnings)
		}
	})
	t.Run("sandbox off shows what the probe finds", func(t *testing.T) {
		log, _, _ := probe(t, []string{"HANGAR_SANDBOX=off"})
		wants := []string{"READ token", "READ secret.key", "READ workspace.db", "READ another run's token"}
		if onPostgres(t) {
			wants = slices.DeleteFunc(wants, func(s string) bool { return s == "READ workspace.db" }) // the database is not a file here
		}
		for _, want := range wants {
			if !strings.Contains(log, want) {
				t.Errorf("without the sandbox the probe should find %q:\n%s", want, log)
			}
		}
	})
}

// A required sandbox that cannot work on the node fails the run with the reason, before the
// command starts.
func TestRequiredSandboxFailsClearly(t *testing.T) {
	// A bwrap that cannot work here (as where user namespaces are off).
	fake := t.TempDir()
	writeFiles(t, fake, map[string]string{"bwrap": "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"})
	if err := os.Chmod(filepath.Join(fake, "bwrap"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := newWSEnv(t, []string{"HANGAR_SANDBOX=required", "PATH=" + fake + string(os.PathListSeparator) + os.Getenv("PATH")})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"job.yml": "command: echo should-not-run\n"})
	name := w.create(filepath.Join(dir, "job.yml"))
	d := w.waitStatus(name, 60*time.Second, job.Failed)
	if !strings.Contains(d.StatusReason, "sandbox is required") || !strings.Contains(d.StatusReason, "No permissions") {
		t.Errorf("reason %q", d.StatusReason)
	}
	if strings.Contains(w.logs(name), "should-not-run") {
		t.Error("the command ran without the required sandbox")
	}
}

// The same on the other nodes: a run on a cluster node sees none of its agent's identity (agent
// token), the node's other runs or the workspace home of the machine; a run on an attached VM
// none of the host's Hangar work directory but its own run.
func TestRunsOnNodesCannotReadTheirNode(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{NetNS: true})
	w := newWS(t)
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	probe := `WORK=$(cd ../../.. && pwd)
echo "WORK: $(ls -A "$WORK" | tr '\n' ' ')"
echo "RUNS: $(ls -A "$WORK/runs" | tr '\n' ' ')"
for f in agent.json token secret.key workspace.db; do
  head -c 1 "$WORK/$f" >/dev/null 2>&1 && echo "READ $f"
  head -c 1 "$WS/$f" >/dev/null 2>&1 && echo "READ workspace $f"
done
echo probed`
	writeFiles(t, dir, map[string]string{
		"vm.yml":       vmYAML("vm", srv, srv.KeyFile, work),
		"pool.yml":     "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 600\n",
		"src/probe.sh": probe,
	})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	for _, target := range []string{"vm", "pool"} {
		t.Run(target, func(t *testing.T) {
			// The workspace home is on the cluster nodes' machine; a VM (here a network namespace
			// sharing this machine's disk, logged in as root) has none of it in real life.
			ws := w.home
			if target == "vm" {
				ws = "/nonexistent"
			}
			writeFiles(t, dir, map[string]string{target + ".yml": "command: sleep 200\ncompute: " + target + "\n",
				target + "-probe.yml": "command: WS=" + ws + " bash probe.sh\ncode: src\ncompute: " + target + "\n"})
			other := w.create(filepath.Join(dir, target+".yml"))
			w.waitStatus(other, 2*time.Minute, job.Running)
			name := w.create(filepath.Join(dir, target+"-probe.yml"))
			d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed)
			log := w.logs(name)
			if d.Status != job.Completed || !strings.Contains(log, "probed") || len(d.Warnings) > 0 {
				t.Fatalf("%s (%s), warnings %q:\n%s", d.Status, d.StatusReason, d.Warnings, log)
			}
			if strings.Contains(log, "READ") || strings.Contains(log, other) || !strings.Contains(log, "RUNS: "+name+" \n") {
				t.Errorf("the run on %s saw its node's Hangar files:\n%s", target, log)
			}
			w.ok("job", "cancel", "-n", other, "--yes")
		})
	}
}
