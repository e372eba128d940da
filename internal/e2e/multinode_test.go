package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/job"
)

// A 2-node × 2-process torch.distributed run on a cluster of local agents: as soon as the run
// is over, `job download --all` has every rank's log (by global rank), each node's merged log,
// and the outputs both nodes wrote (node 0's file wins a path both wrote, and the run says so).
// The same holds for a run that fails on node 1.
func TestMultiNodeRunKeepsEveryNodesFiles(t *testing.T) {
	requireTorch(t)
	w := newWS(t)
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "examples", "distributed", "src")
	job2x2 := "code: " + src + "\ncompute: pool\nresources: {instance_count: 2}\n" +
		"distribution: {type: pytorch, process_count_per_instance: 2}\n"
	writeFiles(t, dir, map[string]string{
		"cluster.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n",
		// Outputs first: the all-reduce then waits for every rank, so all are written when it ends.
		"ok.yml": `command: >-
  echo "rank $RANK on node $NODE_RANK" > outputs/rank_$RANK.txt &&
  echo "node $NODE_RANK" > outputs/common.txt &&
  /usr/bin/python3 allreduce.py
` + job2x2,
		"fail.yml": "command: /usr/bin/python3 allreduce.py\nenvironment_variables: {FAIL_RANK: 3}\n" + job2x2,
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))

	r := w.ok("job", "create", "-f", filepath.Join(dir, "ok.yml"), "--stream", "--name", "both")
	checkAllReduce(t, r.stdout, "4")
	out := t.TempDir()
	w.ok("job", "download", "-n", "both", "--all", "--download-path", out) // right after the end
	logs := filepath.Join(out, "both", "artifacts", "user_logs")
	for rank := 0; rank < 4; rank++ {
		want := fmt.Sprintf("rank %d/4 local %d node %d", rank, rank%2, rank/2)
		if got := readFile(t, filepath.Join(logs, fmt.Sprintf("std_log_process_%d.txt", rank))); !strings.Contains(got, want) {
			t.Errorf("std_log_process_%d.txt = %q, want %q", rank, got, want)
		}
		merged := "std_log.txt"
		if rank >= 2 {
			merged = "std_log_node_1.txt"
		}
		if got := readFile(t, filepath.Join(logs, merged)); !strings.Contains(got, fmt.Sprintf("[rank %d] ", rank)+want) {
			t.Errorf("%s lacks rank %d:\n%s", merged, rank, got)
		}
		outFile := filepath.Join(out, "both", "artifacts", "outputs", fmt.Sprintf("rank_%d.txt", rank))
		if got := readFile(t, outFile); got != fmt.Sprintf("rank %d on node %d\n", rank, rank/2) {
			t.Errorf("outputs/rank_%d.txt = %q", rank, got)
		}
	}
	if got := readFile(t, filepath.Join(out, "both", "artifacts", "outputs", "common.txt")); got != "node 0\n" {
		t.Errorf("outputs/common.txt = %q, want node 0's", got)
	}
	if st, err := os.Stat(filepath.Join(out, "both", "artifacts", "system_logs", "node_1")); err != nil || !st.IsDir() {
		t.Errorf("node 1's system logs: %v", err)
	}
	d := w.show("both")
	if !strings.Contains(strings.Join(d.Warnings, "\n"), "outputs/common.txt") {
		t.Errorf("warnings %q do not name the path both nodes wrote", d.Warnings)
	}

	// Node 1 fails: the run fails with its reason, and its logs are in the artifacts at the end.
	r = w.run("job", "create", "-f", filepath.Join(dir, "fail.yml"), "--stream", "--name", "broken")
	if r.code == 0 || !strings.Contains(r.stderr, "rank 3 exited with code 1 first") {
		t.Fatalf("failing rank: exit %d, %s", r.code, r.stderr)
	}
	if d := w.show("broken"); d.Status != job.Failed || !strings.HasPrefix(d.StatusReason, "node 1: rank 3 exited") {
		t.Errorf("broken: %s %q", d.Status, d.StatusReason)
	}
	out = t.TempDir()
	w.ok("job", "download", "-n", "broken", "--all", "--download-path", out)
	logs = filepath.Join(out, "broken", "artifacts", "user_logs")
	if got := readFile(t, filepath.Join(logs, "std_log_process_3.txt")); !strings.Contains(got, "rank 3 fails on purpose") {
		t.Errorf("std_log_process_3.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(logs, "std_log_node_1.txt")); !strings.Contains(got, "[rank 3] rank 3 fails on purpose") {
		t.Errorf("std_log_node_1.txt = %q", got)
	}
	for _, f := range []string{"std_log.txt", "std_log_process_0.txt", "std_log_process_1.txt", "std_log_process_2.txt"} {
		if _, err := os.Stat(filepath.Join(logs, f)); err != nil {
			t.Errorf("broken's %s: %v", f, err)
		}
	}
}
