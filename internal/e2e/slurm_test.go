package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// The Slurm tests run against the two-node test cluster of scripts/setup/slurm.sh (hangar-n1 and
// hangar-n2 on this machine; partitions debug and one_node with MaxNodes=1; KillWait=5). They run
// in parallel with each other: the time-limit test alone waits for Slurm (60–90 s).

// slurmConf returns the test cluster's slurm.conf, failing under CI when there is none.
func slurmConf(t *testing.T) string { t.Helper(); return backendtest.SlurmConf(t) }

// slurmCmd runs a Slurm command against the test cluster.
func slurmCmd(t *testing.T, conf string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// slurmJob returns the Slurm job id of a run, from the handle the backend wrote in its run dir.
func slurmJob(t *testing.T, runDir string) string {
	t.Helper()
	var h struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(runDir, "handle.json"))), &h); err != nil || h.JobID == "" {
		t.Fatalf("handle of %s: %v %+v", runDir, err, h)
	}
	return h.JobID
}

// slurmState is the job's state in `scontrol show job`.
func slurmState(t *testing.T, conf, id string) string {
	t.Helper()
	out := slurmCmd(t, conf, "scontrol", "show", "job", id)
	_, after, _ := strings.Cut(out, "JobState=")
	state, _, _ := strings.Cut(after, " ")
	return state
}

// cancelSlurmJobs cancels the jobs still queued or running from dir (a test's workspace).
func cancelSlurmJobs(conf, dir string) {
	cmd := exec.Command("squeue", "--noheader", "--format=%i %Z")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, _ := cmd.Output()
	for _, l := range strings.Split(string(out), "\n") {
		id, wd, ok := strings.Cut(strings.TrimSpace(l), " ")
		if ok && strings.HasPrefix(wd, dir) {
			c := exec.Command("scancel", id)
			c.Env = cmd.Env
			_ = c.Run()
		}
	}
}

func slurmYAML(name, conf, extra string) string {
	return fmt.Sprintf("name: %s\ntype: slurm\nslurm_conf: %s\n%s", name, conf, extra)
}

// Attach a Slurm target and run jobs through it: a one-node job (logs streamed, outputs
// downloaded, the generated script kept in the run dir), a two-node job whose command's own srun
// prints from both nodes (and whose script's srun check recorded both in
// system_logs/slurm_nodes.txt), a cancel while running (Canceled, the command got SIGTERM, the Slurm
// job ended) and while pending (scancel: CANCELLED in Slurm), and a job
// Slurm keeps PENDING (PartitionNodeLimit), whose reason `job show` gives, also after a server
// crash and restart (the handle's job id is all it needs), until it is canceled.
func TestSlurmTarget(t *testing.T) {
	t.Parallel()
	conf := slurmConf(t)
	w := newWS(t, "--stale-after", "2s")
	t.Cleanup(func() { cancelSlurmJobs(conf, w.home) })
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hpc.yml":      slurmYAML("hpc", conf, "partition: debug\nmax_nodes: 2\n"),
		"one.yml":      slurmYAML("one", conf, "partition: one_node\n"),
		"nopart.yml":   slurmYAML("nopart", conf, "partition: gpu-a100\n"),
		"src/train.sh": "echo \"on $SLURMD_NODENAME job $SLURM_JOB_ID master $MASTER_ADDR\"; cat \"$1\"; echo trained > outputs/model.txt\n",
		"data/in.txt":  "input data\n",
		"job.yml":      "command: bash train.sh ${{inputs.data}}\ncode: src\ncompute: azureml:hpc\ninputs:\n  data: {type: uri_file, path: data/in.txt}\n",
		"two.yml":      "command: srun bash -c 'echo rank $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME'\ncompute: hpc\nresources: {instance_count: 2}\n",
		"three.yml":    "command: hostname\ncompute: hpc\nresources: {instance_count: 3}\n",
		"long.yml":     "command: trap 'echo got TERM; exit 143' TERM; echo started; while true; do sleep 0.1; done\ncompute: hpc\n",
		"pending.yml":  "command: echo never runs\ncompute: one\nresources: {instance_count: 2}\n",
	})

	r := w.run("compute", "attach", "-f", filepath.Join(dir, "nopart.yml"))
	if msg := strings.TrimSpace(r.stderr); r.code == 0 || !strings.Contains(msg, "partition gpu-a100 does not exist") || strings.Contains(msg, "\n") {
		t.Errorf("attach with a missing partition: exit %d, %q", r.code, msg)
	}
	w.ok("compute", "attach", "-f", filepath.Join(dir, "hpc.yml"))
	w.ok("compute", "attach", "-f", filepath.Join(dir, "one.yml"))
	show := w.ok("compute", "show", "-n", "hpc").stdout
	for _, want := range []string{"Partition:", "debug", "slurm-wlm", "hangar-n1", "hangar-n2", "NODE", "STATE"} {
		if !strings.Contains(show, want) {
			t.Errorf("compute show lacks %q:\n%s", want, show)
		}
	}
	if cs := w.ok("compute", "list", "-o", "json").stdout; strings.Contains(cs, "nopart") {
		t.Errorf("a refused attach was stored: %s", cs)
	}

	// One node: logs streamed, inputs fetched, outputs downloaded.
	r = w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream", "--name", "slurm1")
	if !strings.Contains(r.stdout, "on hangar-n") || !strings.Contains(r.stdout, "input data") || !strings.Contains(r.stdout, "master ") {
		t.Errorf("log of the Slurm job:\n%s", r.stdout)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", "slurm1", "--download-path", out)
	if got := readFile(t, filepath.Join(out, "slurm1", "artifacts", "outputs", "model.txt")); got != "trained\n" {
		t.Errorf("outputs/model.txt = %q", got)
	}
	runDir := filepath.Join(w.home, "slurm", "runs", "slurm1")
	if s := readFile(t, filepath.Join(runDir, "job.sh")); !strings.Contains(s, " supervise --config ") || !strings.Contains(s, " reap --run ") {
		t.Errorf("generated script:\n%s", s)
	}
	id := slurmJob(t, runDir)
	testwait.Within(t, 20*time.Second, "Slurm to say COMPLETED", func() bool { return slurmState(t, conf, id) == "COMPLETED" })

	// Two nodes: the command's srun runs a task on each node of the allocation.
	r = w.ok("job", "create", "-f", filepath.Join(dir, "two.yml"), "--stream", "--name", "slurm2")
	for _, want := range []string{"rank 0 of 2 on hangar-n", "rank 1 of 2 on hangar-n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("two-node log lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "hangar-n1") || !strings.Contains(r.stdout, "hangar-n2") {
		t.Errorf("srun did not reach both nodes:\n%s", r.stdout)
	}
	w.ok("job", "download", "-n", "slurm2", "--download-path", out)
	if got := readFile(t, filepath.Join(out, "slurm2", "artifacts", "system_logs", "slurm_nodes.txt")); !strings.Contains(got, "0 hangar-n1") || !strings.Contains(got, "1 hangar-n2") {
		t.Errorf("system_logs/slurm_nodes.txt = %q", got)
	}
	if r := w.run("job", "create", "-f", filepath.Join(dir, "three.yml"), "--stream"); r.code == 0 || !strings.Contains(r.stderr, "max_nodes") {
		t.Errorf("a job over max_nodes: exit %d %s", r.code, r.stderr)
	}

	// Cancel a running job: scancel --batch --signal=TERM reaches the supervisor, which stops the
	// command, reports Canceled and ends the job.
	name := w.create(filepath.Join(dir, "long.yml"))
	testwait.Within(t, 30*time.Second, "the Slurm job to start", func() bool { return logHas(w, name, "started") })
	w.ok("job", "cancel", "-n", name, "--yes")
	if d := w.waitStatus(name, 30*time.Second, job.Canceled, job.Failed, job.Completed); d.Status != job.Canceled || !logHas(w, name, "got TERM") {
		t.Errorf("cancel: %s (%s), log %q", d.Status, d.StatusReason, w.logs(name))
	}
	id = slurmJob(t, filepath.Join(w.home, "slurm", "runs", name))
	testwait.Within(t, 20*time.Second, "the Slurm job to end", func() bool { return slurmState(t, conf, id) != "RUNNING" })
	if st := slurmState(t, conf, id); st != "COMPLETED" {
		t.Errorf("Slurm's state of the job canceled while running: %s (want COMPLETED: the supervisor ended it)", st)
	}

	// Pending in Slurm: its reason is the run's; after a server crash the run is found by its job id.
	name = w.create(filepath.Join(dir, "pending.yml"))
	pendingReason := func() bool {
		d := w.show(name)
		return d.Status == job.Queued && strings.Contains(d.StatusReason, "PENDING: PartitionNodeLimit")
	}
	testwait.Within(t, 20*time.Second, "the pending reason", pendingReason)
	w.killServer()
	w.startServer()
	testwait.Within(t, 20*time.Second, "the pending reason after a restart", pendingReason)
	if d := w.show(name); !strings.Contains(d.StatusReason, "more nodes than the partition allows") {
		t.Errorf("pending reason: %q", d.StatusReason)
	}
	w.ok("job", "cancel", "-n", name, "--yes")
	d := w.waitStatus(name, 30*time.Second, job.Canceled, job.Failed, job.Completed)
	if d.Status != job.Canceled || !strings.Contains(d.StatusReason, "CANCELLED") {
		t.Errorf("canceled while pending: %s (%s)", d.Status, d.StatusReason)
	}
	if st := slurmState(t, conf, slurmJob(t, filepath.Join(w.home, "slurm", "runs", name))); st != "CANCELLED" {
		t.Errorf("Slurm's state of the job canceled while pending: %s", st)
	}
}

// A job killed by Slurm's time limit ends with reason TIMEOUT even though its supervisor could not
// report: the target's time_limit is 1 minute (Slurm's smallest), the command ignores SIGTERM and
// Hangar's cancel grace (30 s) outlasts Slurm's KillWait (5 s), so Slurm's SIGKILL ends the
// supervisor in the middle of stopping the command; the backend reads Slurm's verdict.
func TestSlurmTimeLimit(t *testing.T) {
	t.Parallel()
	conf := slurmConf(t)
	w := newWS(t, "--stale-after", "2s", "--cancel-grace", "30s")
	t.Cleanup(func() { cancelSlurmJobs(conf, w.home) })
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"short.yml": slurmYAML("short", conf, "time_limit: 1\n"),
		"job.yml":   "command: trap 'echo ignoring TERM' TERM; echo started; while true; do sleep 0.2; done\ncompute: short\n",
		"plain.yml": "command: echo started; sleep 600\ncompute: short\n",
	})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "short.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	// The same limit on a command that stops on SIGTERM: its supervisor reports, and says why.
	plain := w.create(filepath.Join(dir, "plain.yml"))
	testwait.Within(t, 30*time.Second, "the job to start", func() bool { return logHas(w, name, "started") })
	defer func() {
		d := w.waitStatus(plain, 150*time.Second, job.Canceled, job.Failed, job.Completed)
		if !strings.HasPrefix(d.StatusReason, "TIMEOUT") || d.Status != job.Canceled {
			t.Errorf("a reporting supervisor after Slurm's time limit: %s (%s)", d.Status, d.StatusReason)
		}
	}()
	d := w.waitStatus(name, 150*time.Second, job.Canceled, job.Failed, job.Completed)
	if !strings.HasPrefix(d.StatusReason, "TIMEOUT") || d.Status != job.Canceled {
		t.Errorf("after Slurm's time limit: %s (%s)", d.Status, d.StatusReason)
	}
	id := slurmJob(t, filepath.Join(w.home, "slurm", "runs", name))
	testwait.Within(t, 60*time.Second, "Slurm to say TIMEOUT", func() bool { return slurmState(t, conf, id) == "TIMEOUT" })
}

// Slurm reached through a login host over SSH (here an sshd on this machine): attach pins its
// host key, hangar and the snapshot are sent to the login host's work directory (the cluster's
// shared filesystem), and the job runs as it does without one.
func TestSlurmLoginHost(t *testing.T) {
	t.Parallel()
	conf := slurmConf(t)
	srv := sshtest.Start(t, sshtest.Options{})
	w := newWS(t, "--stale-after", "2s")
	t.Cleanup(func() { cancelSlurmJobs(conf, w.home) })
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "shared")
	t.Cleanup(func() { cancelSlurmJobs(conf, work) })
	writeFiles(t, dir, map[string]string{
		"hpc.yml": fmt.Sprintf("name: viaLogin\ntype: slurm\npartition: debug\nslurm_conf: %s\nlogin:\n  address: %s:%d\n  ssh_settings:\n    admin_username: %s\n    ssh_private_key_file: %s\n  work_dir: %s\n",
			conf, srv.Host, srv.Port, srv.User, srv.KeyFile, work),
		"src/train.sh": "echo \"from $SLURMD_NODENAME in $PWD\"; echo ok > outputs/result.txt\n",
		"job.yml":      "command: bash train.sh\ncode: src\ncompute: viaLogin\n",
	})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "hpc.yml"))
	var ct api.Compute
	if err := json.Unmarshal([]byte(w.ok("compute", "show", "-n", "viaLogin", "-o", "json").stdout), &ct); err != nil {
		t.Fatal(err)
	}
	if ct.Spec == nil || ct.Spec.Slurm == nil || ct.Spec.Slurm.Login == nil || ct.Spec.Slurm.Login.HostKey == "" || ct.Node == nil || ct.Node.Cores == 0 {
		t.Fatalf("compute show: %+v", ct)
	}
	r := w.ok("job", "create", "-f", filepath.Join(dir, "job.yml"), "--stream", "--name", "vialogin1")
	if !strings.Contains(r.stdout, "from hangar-n") || !strings.Contains(r.stdout, work) {
		t.Errorf("log:\n%s", r.stdout)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", "vialogin1", "--download-path", out)
	if got := readFile(t, filepath.Join(out, "vialogin1", "artifacts", "outputs", "result.txt")); got != "ok\n" {
		t.Errorf("outputs/result.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(work, "cache", "blobs")); err != nil {
		t.Errorf("the login host's cache was not seeded: %v", err)
	}
}
