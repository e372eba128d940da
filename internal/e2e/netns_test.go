package e2e

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bridgeNet is a bridge with network namespaces attached: separate "machines" with their own
// addresses on one host.
type bridgeNet struct {
	bridge string
	prefix string   // 10.a.b
	ns     []string // namespace names; namespace i has address prefix.(11+i)
}

// newBridgeNet creates a bridge at prefix.1 and n namespaces at prefix.11, .12, ... (removed at
// cleanup). It needs root and iproute2; in CI a missing one fails the test.
func newBridgeNet(t *testing.T, n int) *bridgeNet {
	t.Helper()
	if os.Geteuid() != 0 {
		requireTool(t, "a-root-user")
	}
	requireTool(t, "ip")
	requireTool(t, "nsenter")
	a, _ := rand.Int(rand.Reader, big.NewInt(200))
	b, _ := rand.Int(rand.Reader, big.NewInt(250))
	id := fmt.Sprintf("%d%d", a.Int64(), b.Int64())
	bn := &bridgeNet{bridge: "brhg" + id, prefix: fmt.Sprintf("10.%d.%d", 20+a.Int64(), b.Int64())}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		for i, ns := range bn.ns {
			_ = exec.Command("ip", "netns", "del", ns).Run()
			_ = exec.Command("ip", "link", "del", fmt.Sprintf("vh%s%d", id, i)).Run()
		}
		_ = exec.Command("ip", "link", "del", bn.bridge).Run()
	})
	run("link", "add", bn.bridge, "type", "bridge")
	run("addr", "add", bn.prefix+".1/24", "dev", bn.bridge)
	run("link", "set", bn.bridge, "up")
	for i := 0; i < n; i++ {
		ns, host, peer := fmt.Sprintf("hgns%s%d", id, i), fmt.Sprintf("vh%s%d", id, i), fmt.Sprintf("vn%s%d", id, i)
		run("netns", "add", ns)
		bn.ns = append(bn.ns, ns)
		run("link", "add", host, "type", "veth", "peer", "name", peer)
		run("link", "set", peer, "netns", ns)
		run("link", "set", host, "master", bn.bridge)
		run("link", "set", host, "up")
		run("-n", ns, "addr", "add", fmt.Sprintf("%s.%d/24", bn.prefix, 11+i), "dev", peer)
		run("-n", ns, "link", "set", peer, "up")
		run("-n", ns, "link", "set", "lo", "up")
	}
	return bn
}

// Two cluster nodes in their own network namespaces (a command provider starts each agent with
// nsenter): MASTER_ADDR is node 0's own address, and node 1's ranks reach it over the bridge.
func TestDistributedAcrossNetworkNamespaces(t *testing.T) {
	requireTorch(t)
	bn := newBridgeNet(t, 2)
	w := newWS(t, "--listen", bn.prefix+".1:0", "--tls")
	// Both agents' work directories are on this one machine: node 1's MPI ranks start in the
	// working directory mpirun gives them, node 0's, which the run user must be able to reach.
	dir := runsSee(t)
	t.Cleanup(func() { killMatching(dir) }) // the agents the create hook started
	ex := filepath.Join(repoRoot(t), "examples", "distributed")
	create := fmt.Sprintf(`#!/bin/bash
# Each new node is an agent in the next namespace, in turn.
set -euo pipefail
exec 9>%[1]s/lock; flock 9
n=$(cat %[1]s/counter 2>/dev/null || echo 0); echo $((n + 1)) > %[1]s/counter
ns=(%[2]s); ns=${ns[$((n %% 2))]}
work=%[1]s/$HANGAR_NODE_ID; mkdir -p "$work"
# Its own network and host name, as a separate machine has (MPI tells nodes apart by host name).
setsid nohup nsenter --net=/run/netns/$ns unshare --uts sh -c 'hostname "$0"; exec "$@"' "hangar-$ns" \
  %[3]s agent --server "$HANGAR_JOIN_URL" --work-dir "$work" \
  --node-id "$HANGAR_NODE_ID" --cores "$HANGAR_CORES" --memory "$HANGAR_MEMORY_BYTES" --gpus none \
  --kill-runs-on-exit >"$work/agent.log" 2>&1 </dev/null 9>&- &
echo $!
`, dir, strings.Join(bn.ns, " "), hangarBin)
	writeFiles(t, dir, map[string]string{
		"create.sh": create,
		"cluster.yml": fmt.Sprintf("name: nets\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n"+
			"provider:\n  type: command\n  create: bash %s\n  delete: %s\n", filepath.Join(dir, "create.sh"),
			filepath.Join(repoRoot(t), "examples", "cluster", "local-agent", "delete.sh")),
		"job.yml": "command: /usr/bin/python3 allreduce.py\ncode: " + filepath.Join(ex, "src") +
			"\ncompute: nets\nresources: {instance_count: 2}\ndistribution: {type: pytorch, process_count_per_instance: 2}\n",
		"mpi.yml": "command: /usr/bin/python3 mpi_sum.py\ncode: " + filepath.Join(ex, "src") +
			"\ncompute: nets\nresources: {instance_count: 2}\ndistribution: {type: mpi, process_count_per_instance: 2}\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	r := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream")
	checkAllReduce(t, r.stdout, "4")
	masters := map[string]bool{}
	for _, m := range regexp.MustCompile(`master ([0-9.]+):\d+`).FindAllStringSubmatch(r.stdout, -1) {
		masters[m[1]] = true
	}
	if len(masters) != 1 {
		t.Fatalf("ranks disagree on MASTER_ADDR: %v", masters)
	}
	for m := range masters {
		if !strings.HasPrefix(m, bn.prefix+".1") || m == bn.prefix+".1" {
			t.Errorf("MASTER_ADDR %s is not a namespace's own address (%s.11 or .12)", m, bn.prefix)
		}
	}

	// Open MPI across the two nodes: mpirun on node 0 starts node 1's daemon through Hangar.
	r = w.ok("job", "create", "-f", filepath.Join(dir, "mpi.yml"), "--stream")
	for rank := 0; rank < 4; rank++ {
		if want := fmt.Sprintf("[rank %d] mpi rank %d/4 sum 10 want 10", rank, rank); !strings.Contains(r.stdout, want) {
			t.Errorf("MPI log lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "started the MPI daemon for node 1") {
		t.Errorf("node 1's daemon was not started through Hangar:\n%s", r.stdout)
	}
}
