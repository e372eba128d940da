package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// requireTorch needs Debian's torch, Open MPI and mpi4py (scripts/setup/python.sh installs them).
func requireTorch(t *testing.T) {
	t.Helper()
	err := exec.Command("/usr/bin/python3", "-c", "import torch, mpi4py").Run()
	if _, lerr := exec.LookPath("mpirun"); err == nil && lerr == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("torch, mpi4py and mpirun are required in CI (scripts/setup/python.sh)")
	}
	t.Skip("no torch / mpi4py / mpirun")
}

var sumRE = regexp.MustCompile(`\[rank (\d+)\] rank (\d+)/(\d+) local \d+ node (\d+) master [^ ]+ sum (\d+) want (\d+)`)

// checkAllReduce checks that every rank of the world reported the right sum, under its prefix.
func checkAllReduce(t *testing.T, log string, world string) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range sumRE.FindAllStringSubmatch(log, -1) {
		if m[1] != m[2] || m[3] != world || m[5] != m[6] {
			t.Errorf("bad line %q", m[0])
		}
		seen[m[1]] = true
	}
	if len(seen) != atoi(world) {
		t.Errorf("ranks seen %v, want %s:\n%s", seen, world, log)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// A real torch.distributed all-reduce: one node × 2 processes on the local target, then 2 nodes ×
// 2 processes on a cluster of local agents; per-process logs; a failing rank stops the others.
func TestDistributedPyTorch(t *testing.T) {
	requireTorch(t)
	w := newWS(t)
	ex := filepath.Join(repoRoot(t), "examples", "distributed")
	r := w.ok("job", "create", "-f", filepath.Join(ex, "job.yml"), "--stream", "--name", "dist1")
	checkAllReduce(t, r.stdout, "2")
	out := t.TempDir()
	w.ok("job", "download", "-n", "dist1", "--download-path", out)
	for _, f := range []string{"std_log_process_0.txt", "std_log_process_1.txt"} {
		if b := readFile(t, filepath.Join(out, "dist1", "artifacts", "user_logs", f)); !strings.Contains(b, "sum 3 want 3") {
			t.Errorf("%s = %q", f, b)
		}
	}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"cluster.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 2\nidle_time_before_scale_down: 60\n",
		"multi.yml": "command: /usr/bin/python3 allreduce.py\ncode: " + filepath.Join(ex, "src") +
			"\ncompute: pool\nresources: {instance_count: 2}\ndistribution: {type: pytorch, process_count_per_instance: 2}\n",
		"fail.yml": "command: /usr/bin/python3 allreduce.py\ncode: " + filepath.Join(ex, "src") +
			"\ncompute: pool\nresources: {instance_count: 2}\ndistribution: {type: pytorch, process_count_per_instance: 2}\nenvironment_variables: {FAIL_RANK: 3}\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	r = w.ok("job", "create", "-f", filepath.Join(dir, "multi.yml"), "--stream")
	checkAllReduce(t, r.stdout, "4")
	nodes := map[string]bool{}
	for _, m := range sumRE.FindAllStringSubmatch(r.stdout, -1) {
		nodes[m[4]] = true
	}
	if len(nodes) != 2 {
		t.Errorf("ranks ran on nodes %v, want 0 and 1", nodes)
	}

	start := time.Now()
	r = w.run("job", "create", "-f", filepath.Join(dir, "fail.yml"), "--stream")
	if r.code != 3 || !strings.Contains(r.stderr, "rank 3 exited with code 1 first") {
		t.Fatalf("failing rank: exit %d, %s", r.code, r.stderr)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("the run took %s to fail (the other ranks sleep 120 s)", took)
	}
	testwait.Within(t, 30*time.Second, "the other ranks to be stopped", func() bool {
		out, _ := exec.Command("pgrep", "-f", "allreduce.py").Output()
		for _, pid := range strings.Fields(string(out)) {
			if cwd, _ := os.Readlink("/proc/" + pid + "/cwd"); strings.HasPrefix(cwd, w.home) {
				return false // one of this test's ranks
			}
		}
		return true
	})
}

// Open MPI on one node: mpirun starts the ranks; the log is tagged per rank.
func TestDistributedMPI(t *testing.T) {
	requireTorch(t)
	w := newWS(t)
	r := w.ok("job", "create", "-f", filepath.Join(repoRoot(t), "examples", "distributed", "mpi.yml"), "--stream")
	for _, want := range []string{"[rank 0] mpi rank 0/2 sum 3 want 3", "[rank 1] mpi rank 1/2 sum 3 want 3"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("log lacks %q:\n%s", want, r.stdout)
		}
	}
}

// fakeNvidiaSMI puts an nvidia-smi that lists n GPUs first on PATH (for machines without GPUs).
func fakeNvidiaSMI(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var lines []string
	for i := 0; i < n; i++ {
		lines = append(lines, strings.Replace("I, Fake GPU, 16384, GPU-fake-I", "I", string(rune('0'+i)), -1))
	}
	script := "#!/bin/sh\ncat <<'EOF'\n" + strings.Join(lines, "\n") + "\nEOF\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir + ":" + os.Getenv("PATH")}
}

// GPUs: each process gets its own CUDA_VISIBLE_DEVICES (one per GPU by default), and two runs on
// one cluster node never share a GPU.
func TestGPUAssignment(t *testing.T) {
	requireTorch(t)
	w := newWSEnv(t, fakeNvidiaSMI(t, 4))
	ex := filepath.Join(repoRoot(t), "examples", "distributed", "src")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"local.yml":   "command: /usr/bin/python3 allreduce.py\ncode: " + ex + "\ndistribution: {type: pytorch}\nenvironment_variables: {SHOW_GPUS: 1}\n",
		"cluster.yml": "name: gpus\ntype: amlcompute\nsize: two-gpu\nmax_instances: 1\nidle_time_before_scale_down: 60\n",
		"one.yml":     "command: echo \"gpus=$CUDA_VISIBLE_DEVICES\"; sleep 3\ncompute: gpus\nresources: {properties: {gpus: 1, cores: 0.1, memory: 64Mi}}\n",
	})
	r := w.ok("job", "create", "-f", filepath.Join(dir, "local.yml"), "--stream")
	var got []string
	for _, m := range regexp.MustCompile(`rank (\d) CUDA_VISIBLE_DEVICES=(\S*)`).FindAllStringSubmatch(r.stdout, -1) {
		got = append(got, m[1]+"="+m[2])
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "0=0 1=1 2=2 3=3" {
		t.Errorf("per-process GPUs %v, want one each:\n%s", got, r.stdout)
	}
	if r := w.ok("job", "create", "-f", filepath.Join(dir, "local.yml"), "--dry-run"); !strings.Contains(r.stdout, "CUDA_VISIBLE_DEVICES=3") {
		t.Errorf("dry run:\n%s", r.stdout)
	}

	w.ok("compute", "add-size", "--name", "two-gpu", "--cores", "2", "--memory", "4Gi", "--gpus", "2", "--gpu-model", "Fake GPU", "--family", "fake")
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	a, b := w.create(filepath.Join(dir, "one.yml")), w.create(filepath.Join(dir, "one.yml"))
	for _, n := range []string{a, b} {
		if d := w.waitStatus(n, time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
			t.Fatalf("%s: %s %s", n, d.Status, d.StatusReason)
		}
	}
	ga, gb := gpuOf(w.logs(a)), gpuOf(w.logs(b))
	if ga == "" || gb == "" || ga == gb || strings.Contains(ga, ",") || strings.Contains(gb, ",") {
		t.Errorf("two runs on one node got GPUs %q and %q", ga, gb)
	}
}

func gpuOf(log string) string {
	m := regexp.MustCompile(`gpus=(\S*)`).FindStringSubmatch(log)
	if m == nil {
		return ""
	}
	return m[1]
}
