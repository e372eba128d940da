package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// clusterShow is what `compute show -o json` prints for a cluster.
type clusterShow struct {
	api.Compute
	Nodes    []api.Node      `json:"nodes"`
	Timeline []api.NodeEvent `json:"timeline"`
}

func (w *ws) cluster(name string) clusterShow {
	w.t.Helper()
	var c clusterShow
	if err := json.Unmarshal([]byte(w.ok("compute", "show", "-n", name, "-o", "json").stdout), &c); err != nil {
		w.t.Fatal(err)
	}
	return c
}

// burst runs the life of a scale-to-zero cluster: 0 nodes → a burst of jobs → up to
// max_instances with the rest queued (with a reason) → all complete → back to 0 after the idle
// time, with the timeline in compute show.
func burst(t *testing.T, w *ws, dir, clusterYAML string, jobs int) {
	t.Helper()
	writeFiles(t, dir, map[string]string{
		"cluster.yml": clusterYAML,
		"job.yml":     "command: echo started; sleep 2; echo done\ncompute: azureml:pool\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	if c := w.cluster("pool"); len(c.Nodes) != 0 {
		t.Fatalf("a new cluster with min_instances 0 has nodes: %+v", c.Nodes)
	}
	var names []string
	for i := 0; i < jobs; i++ {
		names = append(names, w.create(filepath.Join(dir, "job.yml")))
	}
	sawQueued, maxNodes := false, 0
	testwait.Within(t, 2*time.Minute, "every job to end", func() bool {
		c := w.cluster("pool")
		maxNodes = max(maxNodes, len(c.Nodes))
		ended := 0
		for _, n := range names {
			d := w.show(n)
			if d.Status == job.Queued && strings.Contains(d.StatusReason, "node") {
				sawQueued = true
			}
			if d.Status.Terminal() {
				ended++
			}
		}
		return ended == len(names)
	})
	for _, n := range names {
		if d := w.show(n); d.Status != job.Completed || !logHas(w, n, "done") {
			t.Errorf("%s: %s (%s)", n, d.Status, d.StatusReason)
		}
	}
	if maxNodes != 2 || !sawQueued {
		t.Errorf("the cluster peaked at %d nodes (want max_instances 2); a job waited with a reason: %v", maxNodes, sawQueued)
	}
	testwait.Within(t, time.Minute, "the cluster to scale back to zero", func() bool { return len(w.cluster("pool").Nodes) == 0 })
	c := w.cluster("pool")
	var tl []string
	for _, e := range c.Timeline {
		tl = append(tl, e.From+">"+e.To)
	}
	timeline := strings.Join(tl, " ")
	for _, want := range []string{">provisioning", "provisioning>idle", "idle>releasing", "releasing>deleted"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %s: %s", want, timeline)
		}
	}
	testwait.Within(t, 30*time.Second, "compute show to say 0 current, 0 target", func() bool {
		r := w.ok("compute", "show", "-n", "pool")
		return strings.Contains(r.stdout, "Timeline:") && strings.Contains(r.stdout, "0 current, 0 target")
	})
}

// The local provider: nodes are hangar agents on this machine.
func TestClusterLocalProviderScalesToZero(t *testing.T) {
	w := newWS(t)
	burst(t, w, t.TempDir(), `$schema: https://azuremlschemas.azureedge.net/latest/amlCompute.schema.json
name: pool
type: amlcompute
size: local-quarter
min_instances: 0
max_instances: 2
idle_time_before_scale_down: 3
`, 4)
}

// A command provider whose create/delete scripts start and stop real agents (examples/cluster).
func TestClusterCommandProviderScalesToZero(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	t.Cleanup(func() { killMatching(dir) }) // agents the hooks started (work dirs under TMPDIR=dir)
	hooks := filepath.Join(repoRoot(t), "examples", "cluster", "local-agent")
	burst(t, w, dir, fmt.Sprintf(`name: pool
type: amlcompute
size: local-quarter
max_instances: 2
idle_time_before_scale_down: 3
provider:
  type: command
  create: %s
  delete: %s
  timeout: 60
  env:
    HANGAR_EXE: %s
    TMPDIR: %s
`, filepath.Join(hooks, "create.sh"), filepath.Join(hooks, "delete.sh"), hangarBin, dir), 3)
}

// Bad cluster input is refused at create or submit with the reason; a cluster with active runs is
// not deleted without --force; cancel and timeout work on cluster runs.
func TestClusterRefusalsCancelTimeout(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"minmax.yml":  "name: bad\ntype: amlcompute\nsize: local-quarter\nmin_instances: 3\nmax_instances: 2\n",
		"size.yml":    "name: bad\ntype: amlcompute\nsize: Standard_Nope_v9\n",
		"pool.yml":    "name: pool\ntype: amlcompute\nsize: local-quarter\nmax_instances: 1\nidle_time_before_scale_down: 60\n",
		"nodes.yml":   "command: echo\ncompute: pool\nresources: {instance_count: 2}\n",
		"gpus.yml":    "command: echo\ncompute: pool\nresources: {properties: {gpus: 4}}\n",
		"long.yml":    "command: trap 'echo got TERM; exit 143' TERM; echo started; while true; do sleep 0.1; done\ncompute: pool\n",
		"timeout.yml": "command: echo start; sleep 60\ncompute: pool\nlimits: {timeout: 2}\n",
	})
	for file, want := range map[string]string{"minmax.yml": "min_instances", "size.yml": "unknown size"} {
		if r := w.run("compute", "create", "-f", filepath.Join(dir, file)); r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, %q", file, r.code, r.stderr)
		}
	}
	w.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))
	for file, want := range map[string]string{"nodes.yml": "max_instances 1", "gpus.yml": "4 GPUs per node"} {
		if r := w.run("job", "create", "-f", filepath.Join(dir, file)); r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, %q", file, r.code, r.stderr)
		}
	}
	// A core quota on the size's family holds the run back, with the reason.
	if r := w.run("settings", "set", "quota.family.local", "lots"); r.code == 0 {
		t.Errorf("a non-numeric quota was accepted")
	}
	w.ok("settings", "set", "quota.family.local", "0.5")
	name := w.create(filepath.Join(dir, "long.yml"))
	if d := w.waitStatus(name, 30*time.Second, job.Queued); !strings.Contains(d.StatusReason, "quota") {
		testwait.Within(t, 30*time.Second, "a quota reason", func() bool { return strings.Contains(w.show(name).StatusReason, "quota") })
	}
	w.ok("settings", "set", "quota.family.local", "8")
	testwait.Within(t, time.Minute, "the cluster job to start", func() bool { return logHas(w, name, "started") })
	if r := w.run("compute", "delete", "-n", "pool", "--yes"); r.code == 0 || !strings.Contains(r.stderr, "active runs") {
		t.Errorf("delete with an active run: exit %d %s", r.code, r.stderr)
	}
	w.ok("job", "cancel", "-n", name, "--yes")
	if d := w.waitStatus(name, time.Minute, job.Canceled, job.Failed, job.Completed); d.Status != job.Canceled || !logHas(w, name, "got TERM") {
		t.Errorf("cancel on a cluster: %s, log %q", d.Status, w.logs(name))
	}
	if r := w.run("job", "create", "-f", filepath.Join(dir, "timeout.yml"), "--stream"); r.code != 4 || !strings.Contains(r.stderr, "limits.timeout") {
		t.Errorf("timeout on a cluster: exit %d %s", r.code, r.stderr)
	}
	nodes := w.cluster("pool").Nodes
	if len(nodes) == 0 {
		t.Fatal("the cluster has no node left to check its deletion with")
	}
	w.ok("compute", "delete", "-n", "pool", "--yes")
	testwait.Within(t, time.Minute, "the deleted cluster's nodes to go", func() bool {
		for _, n := range nodes {
			if _, err := w.client().Nodes.Get(t.Context(), n.ID); !api.IsNotFound(err) {
				return false
			}
		}
		return true
	})
}

// A low-priority cluster: when the provider reports a node preempted, its run goes back to the
// queue (a new attempt, the old attempt's log kept) and completes on a new node.
func TestClusterPreemptionRequeues(t *testing.T) {
	t.Parallel() // waits most of its time for steps and nodes: beside the other slow, independent tests
	w := newWS(t)
	dir := t.TempDir()
	t.Cleanup(func() { killMatching(dir) })
	hooks := filepath.Join(repoRoot(t), "examples", "cluster", "local-agent")
	preempted := filepath.Join(dir, "preempted")
	writeFiles(t, dir, map[string]string{
		"cluster.yml": fmt.Sprintf(`name: spot
type: amlcompute
size: local-quarter
tier: low_priority
max_instances: 1
idle_time_before_scale_down: 60
provider:
  type: command
  create: %s
  delete: %s
  preempted: cat %s 2>/dev/null || true
  env:
    HANGAR_EXE: %s
    TMPDIR: %s
`, filepath.Join(hooks, "create.sh"), filepath.Join(hooks, "delete.sh"), preempted, hangarBin, dir),
		"job.yml": "command: echo started; sleep 15; echo done\ncompute: spot\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, time.Minute, "the run to start", func() bool { return logHas(w, name, "started") })
	// The agent may join (and start the run) before the create hook returns the machine's id.
	var nodes []api.Node
	testwait.Within(t, time.Minute, "the node's machine id", func() bool {
		nodes = w.cluster("spot").Nodes
		return len(nodes) == 1 && nodes[0].ProviderID != ""
	})
	writeFiles(t, dir, map[string]string{"preempted": nodes[0].ProviderID + "\n"})
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed || d.Attempt != 2 {
		t.Fatalf("after preemption: %s attempt %d (%s)", d.Status, d.Attempt, d.StatusReason)
	}
	requeued := false
	for _, e := range d.Events {
		requeued = requeued || (e.To == job.Queued && strings.Contains(e.Reason, "preempt"))
	}
	if !requeued {
		t.Errorf("no requeue event: %+v", d.Events)
	}
	old, err := w.client().Jobs.Logs(t.Context(), name, "attempt_1/std_log.txt", 0, 0)
	if err != nil || len(old.Lines) == 0 || old.Lines[0].Text != "started" {
		t.Errorf("attempt 1's log: %+v, %v", old, err)
	}
	if !logHas(w, name, "done") {
		t.Errorf("attempt 2's log: %q", w.logs(name))
	}
	var sawPreempted bool
	for _, e := range w.cluster("spot").Timeline {
		sawPreempted = sawPreempted || e.To == "preempted"
	}
	if !sawPreempted {
		t.Errorf("timeline has no preempted node")
	}
}
