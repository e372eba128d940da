package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/backend/kubernetes/kubetest"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// everyTarget attaches one compute target of each kind to w, named after its kind: local (built
// in), vm (an SSH host in a network namespace), pool (a cluster of local-provider agents) and hpc
// (the Slurm test cluster).
func everyTarget(t *testing.T, w *ws, dir string) []string {
	t.Helper()
	srv := sshtest.Start(t, sshtest.Options{NetNS: true})
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	conf := slurmConf(t)
	t.Cleanup(func() { cancelSlurmJobs(conf, w.home) })
	writeFiles(t, dir, map[string]string{
		"vm.yml":   vmYAML("vm", srv, srv.KeyFile, work),
		"pool.yml": "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 4\nidle_time_before_scale_down: 600\n",
		"hpc.yml":  slurmYAML("hpc", conf, "partition: debug\nmax_nodes: 2\n"),
	})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	w.ok("compute", "attach", "-f", filepath.Join(dir, "hpc.yml"))
	return []string{"local", "vm", "pool", "hpc"}
}

// attachKube attaches the Kubernetes test cluster as target kube (jobs run on its real kubelet).
func attachKube(t *testing.T, w *ws, dir string) string {
	t.Helper()
	kc := kubetest.Config(t)
	w.kubeCleanup(kc)
	writeFiles(t, dir, map[string]string{"kube.yml": kubeYAML("kube", kc, backendtest.StaticBinary(t), "")})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "kube.yml"))
	return "kube"
}

// kill -9 of the workspace server, twice, while chatty runs go on on every kind of target: every
// run completes, with every log line and metric point, in the stored log and the downloaded one.
func TestFaultServerKill(t *testing.T) {
	w := newWS(t, "--stale-after", "5s")
	dir := t.TempDir()
	const n = 150
	names := map[string][]string{}
	for _, target := range append(everyTarget(t, w, dir), attachKube(t, w, dir)) {
		runs := 2
		if target == "local" {
			runs = 8
		}
		file := filepath.Join(dir, target+".yml.job")
		writeFiles(t, dir, map[string]string{filepath.Base(file): fmt.Sprintf("command: %s\ncompute: %s\n", chatty(n, "0.1"), target)})
		for i := 0; i < runs; i++ {
			names[target] = append(names[target], w.create(file))
		}
	}
	for _, target := range []string{"local", "vm", "pool", "hpc", "kube"} {
		for _, name := range names[target] {
			testwait.Within(t, 3*time.Minute, name+" to log", func() bool { return logHas(w, name, "line 3") })
		}
	}
	for i := 0; i < 2; i++ {
		w.killServer()
		time.Sleep(2 * time.Second) // runs go on without a server: lines pile up on the nodes
		w.startServer()
		time.Sleep(3 * time.Second)
	}
	for target, runs := range names {
		final := map[string]job.State{}
		row := faultRow{Target: target, Injected: "kill -9 of the server, twice, runs live", Runs: len(runs)}
		for _, name := range runs {
			d := w.waitStatus(name, 5*time.Minute, job.Completed, job.Failed, job.Canceled)
			final[name] = d.Status
			if d.Status != job.Completed {
				row.Reason = d.StatusReason
			}
			l, m := losses(t, w, name, n)
			row.Lines, row.LinesLost = row.Lines+n, row.LinesLost+l
			row.Metrics, row.MetricsLost = row.Metrics+n, row.MetricsLost+m
		}
		row.Final = states(final)
		reportFault(t, row)
		if row.LinesLost+row.MetricsLost > 0 || row.Final != fmt.Sprintf("%d Completed", len(runs)) {
			t.Errorf("%s: %+v", target, row)
		}
	}
}

// kill -9 of a run's supervisor on every kind of target: the run ends Failed with a reason, the
// processes it left (one in its own session) are ended by whoever noticed, and no line the node
// logged is lost.
func TestFaultSupervisorKill(t *testing.T) {
	w := newWS(t, "--stale-after", "2s")
	dir := t.TempDir()
	for _, target := range everyTarget(t, w, dir) {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			tag := sleepTag() // pids inside the run are its PID namespace's: the leftovers are found by name
			file := filepath.Join(dir, target+".kill.yml")
			writeFiles(t, dir, map[string]string{filepath.Base(file): fmt.Sprintf(`command: >-
  setsid sleep 301%[1]s & sleep 302%[1]s &
  for i in $(seq 1 100000); do echo "line $i"; sleep 0.05; done
compute: %[2]s
`, tag, target)})
			name := w.create(file)
			testwait.Within(t, 3*time.Minute, name+" to log", func() bool { return logHas(w, name, "line 20") })
			left := pidsRunning(t, tag, 2)
			sup, runDir := supervisorOf(t, name)
			kill9(t, sup)
			d := w.waitStatus(name, 3*time.Minute, job.Failed, job.Completed, job.Canceled)
			row := faultRow{Target: target, Injected: "kill -9 of the run's supervisor", Runs: 1, Final: string(d.Status), Reason: d.StatusReason}
			testwait.Within(t, 30*time.Second, "the leftovers to end", func() bool {
				row.Leftover = 0
				for _, p := range left {
					if processAlive(p) {
						row.Leftover++
					}
				}
				return row.Leftover == 0
			})
			spool, err := os.ReadFile(filepath.Join(runDir, "user_logs", "std_log.txt"))
			if err != nil {
				t.Fatal(err)
			}
			stored := w.logs(name)
			for _, l := range strings.Split(strings.TrimSpace(string(spool)), "\n") {
				row.Lines++
				if !strings.Contains(stored, l+"\n") {
					row.LinesLost++
				}
			}
			reportFault(t, row)
			if d.Status != job.Failed || !strings.Contains(d.StatusReason, "ended") || row.Leftover > 0 || row.LinesLost > 0 {
				t.Errorf("%+v", row)
			}
		})
	}
}
