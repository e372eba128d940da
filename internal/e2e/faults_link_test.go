package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// linkCut is how long the fault suite cuts a node off the network: over a minute, so that the
// node is judged unusable and its runs NotResponding before it is back.
const linkCut = 75 * time.Second // past the minute after which a silent node is unusable

// setLink takes namespace i's link to the bridge down or up.
func (bn *bridgeNet) setLink(t *testing.T, i int, state string) {
	t.Helper()
	id := strings.TrimPrefix(bn.bridge, "brhg")
	if out, err := exec.Command("ip", "link", "set", fmt.Sprintf("vh%s%d", id, i), state).CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s: %v: %s", state, err, out)
	}
}

// A cut link for a minute between the server and an attached VM, a chatty run going on: the run
// completes and nothing it logged is lost (the supervisor spools; the tunnel comes back).
func TestFaultLinkCutSSH(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{NetNS: true})
	w := newWS(t)
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	const n = 120
	writeFiles(t, dir, map[string]string{
		"vm.yml":  vmYAML("vm", srv, srv.KeyFile, work),
		"job.yml": fmt.Sprintf("command: %s\ncompute: vm\n", chatty(n, "0.75")),
	})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, 2*time.Minute, name+" to log", func() bool { return logHas(w, name, "line 5") })
	srv.CutLink(t)
	time.Sleep(linkCut)
	srv.RestoreLink(t)
	linkCutRow(t, w, name, n, "vm")
}

// The same cut between the server and a cluster node (an agent in its own network namespace).
func TestFaultLinkCutCluster(t *testing.T) {
	t.Parallel()
	bn := newBridgeNet(t, 1)
	w := newWS(t, "--listen", bn.prefix+".1:0", "--tls")
	dir := t.TempDir()
	t.Cleanup(func() { killMatching(dir) })
	const n = 120
	create := fmt.Sprintf(`#!/bin/bash
set -euo pipefail
work=%[1]s/$HANGAR_NODE_ID; mkdir -p "$work"
setsid nohup nsenter --net=/run/netns/%[2]s %[3]s agent --server "$HANGAR_JOIN_URL" --work-dir "$work" \
  --node-id "$HANGAR_NODE_ID" --cores "$HANGAR_CORES" --memory "$HANGAR_MEMORY_BYTES" --gpus none \
  --kill-runs-on-exit >"$work/agent.log" 2>&1 </dev/null &
echo $!
`, dir, bn.ns[0], hangarBin)
	writeFiles(t, dir, map[string]string{
		"create.sh": create,
		"cluster.yml": fmt.Sprintf("name: nets\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\nidle_time_before_scale_down: 600\n"+
			"provider:\n  type: command\n  create: bash %s\n  delete: %s\n", filepath.Join(dir, "create.sh"),
			filepath.Join(repoRoot(t), "examples", "cluster", "local-agent", "delete.sh")),
		"job.yml": fmt.Sprintf("command: %s\ncompute: nets\n", chatty(n, "0.75")),
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, 2*time.Minute, name+" to log", func() bool { return logHas(w, name, "line 5") })
	bn.setLink(t, 0, "down")
	time.Sleep(linkCut)
	bn.setLink(t, 0, "up")
	linkCutRow(t, w, name, n, "pool (agent in a network namespace)")
}

// linkCutRow waits for a run cut off for linkCut and reports what was lost.
func linkCutRow(t *testing.T, w *ws, name string, n int, target string) {
	t.Helper()
	d := w.waitStatus(name, 5*time.Minute, job.Completed, job.Failed, job.Canceled)
	row := faultRow{Target: target, Injected: fmt.Sprintf("link cut for %s, a run live", linkCut), Runs: 1,
		Lines: n, Metrics: n, Final: string(d.Status)}
	if d.Status != job.Completed {
		row.Reason = d.StatusReason
	}
	row.LinesLost, row.MetricsLost = losses(t, w, name, n)
	for _, e := range d.Events {
		if e.To == job.NotResponding {
			row.Reason = "NotResponding during the cut (" + e.Reason + "), then recovered"
		}
	}
	reportFault(t, row)
	if d.Status != job.Completed || row.LinesLost+row.MetricsLost > 0 {
		t.Errorf("%+v", row)
	}
}

// kill -9 of a cluster node's agent while it runs a chatty run: the supervisor, which does not
// depend on its agent, finishes the run; nothing is lost.
func TestFaultAgentKill(t *testing.T) {
	t.Parallel()
	w := newWS(t)
	dir := t.TempDir()
	const n = 150
	writeFiles(t, dir, map[string]string{
		"pool.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 600\n",
		"job.yml":  fmt.Sprintf("command: %s\ncompute: pool\n", chatty(n, "0.1")),
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, 2*time.Minute, name+" to log", func() bool { return logHas(w, name, "line 5") })
	agents := agentsOf(t, w.home)
	if len(agents) == 0 {
		t.Fatal("no agent process found")
	}
	for _, pid := range agents {
		kill9(t, pid)
	}
	d := w.waitStatus(name, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	row := faultRow{Target: "pool", Injected: "kill -9 of the node's agent, a run live", Runs: 1, Lines: n, Metrics: n, Final: string(d.Status)}
	if d.Status != job.Completed {
		row.Reason = d.StatusReason
	}
	row.LinesLost, row.MetricsLost = losses(t, w, name, n)
	reportFault(t, row)
	if d.Status != job.Completed || row.LinesLost+row.MetricsLost > 0 {
		t.Errorf("%+v", row)
	}
}

// agentsOf lists the agent processes working under home (the local provider's nodes).
func agentsOf(t *testing.T, home string) []int {
	t.Helper()
	var pids []int
	out, _ := exec.Command("pgrep", "-f", "agent --server .* --work-dir "+home).Output()
	for _, f := range strings.Fields(string(out)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
