package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// stepScript counts to $STEPS steps (4 a second), keeping its step in $HANGAR_CHECKPOINT_DIR (written atomically)
// and starting from the step found there; outputs/resumed_at_<node> says where it started.
const stepScript = `command: |
  step=0
  if [ -f "$HANGAR_CHECKPOINT_DIR/step" ]; then step=$(cat "$HANGAR_CHECKPOINT_DIR/step"); fi
  echo "starting at step $step"
  echo "$step" > outputs/resumed_at_${NODE_RANK:-0}
  echo "$PWD" > outputs/dir_${NODE_RANK:-0}
  while [ "$step" -lt "$STEPS" ]; do
    step=$((step + 1))
    echo "$step" > "$HANGAR_CHECKPOINT_DIR/step.tmp" && mv "$HANGAR_CHECKPOINT_DIR/step.tmp" "$HANGAR_CHECKPOINT_DIR/step"
    echo "step $step"
    sleep 0.25
  done
  echo done
`

// spotCluster is a low-priority cluster of local agents started by the command provider's
// example hooks; its preempted hook lists the machine ids written to dir/preempted.
func spotCluster(t *testing.T, w *ws, dir string, maxNodes int) {
	t.Helper()
	t.Cleanup(func() { killMatching(dir) })
	t.Cleanup(func() { // before the agents are gone: what they said, for a failure
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "hangar-agents", "*", "agent.log"))
		sups, _ := filepath.Glob(filepath.Join(dir, "hangar-agents", "*", "*", "*", "system_logs", "supervisor.txt"))
		retired, _ := filepath.Glob(filepath.Join(dir, "hangar-agents", "*", "retired", "*", "*", "system_logs", "supervisor.txt"))
		logs = append(append(logs, sups...), retired...)
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			lines := strings.Split(string(b), "\n")
			t.Logf("%s:\n%s", l, strings.Join(lines[max(0, len(lines)-25):], "\n"))
		}
	})
	hooks := filepath.Join(repoRoot(t), "examples", "cluster", "local-agent")
	writeFiles(t, dir, map[string]string{"cluster.yml": fmt.Sprintf(`name: spot
type: amlcompute
size: local-quarter
tier: low_priority
max_instances: %d
idle_time_before_scale_down: 60
provider:
  type: command
  create: %s
  delete: %s
  preempted: cat %s 2>/dev/null || true
  env:
    HANGAR_EXE: %s
    TMPDIR: %s
`, maxNodes, filepath.Join(hooks, "create.sh"), filepath.Join(hooks, "delete.sh"), filepath.Join(dir, "preempted"), hangarBin, dir)})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
}

// logStep is the highest "step N" line of the run's current log.
func logStep(w *ws, name string) int {
	best := 0
	for _, l := range strings.Split(w.logs(name), "\n") {
		if n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(l), "step ")); err == nil && strings.HasPrefix(strings.TrimSpace(l), "step ") {
			best = max(best, n)
		}
	}
	return best
}

// A preemption with the cloud's notice (SIGUSR1 to the node's agent, as a spot watcher sends
// it): the run saves its checkpoint at once, is requeued, resumes on a new node at the saved
// step (not 0), completes, and job show says what the preemption cost.
func TestPreemptionNoticeResumesFromCheckpoint(t *testing.T) {
	t.Parallel() // waits most of its time for steps and nodes: beside the other slow, independent tests
	w := newWS(t)
	dir := t.TempDir()
	spotCluster(t, w, dir, 1)
	// No periodic saves in this run: what it resumes from can only be the notice's save.
	writeFiles(t, dir, map[string]string{"job.yml": stepScript + "compute: spot\nenvironment_variables: {HANGAR_CHECKPOINT_INTERVAL_SECONDS: \"0\", STEPS: \"120\"}\n"})
	name := w.create(filepath.Join(dir, "job.yml"))
	var nodes []api.Node
	testwait.Within(t, time.Minute, "the node's machine id", func() bool {
		nodes = w.cluster("spot").Nodes
		return len(nodes) == 1 && nodes[0].ProviderID != ""
	})
	testwait.Within(t, time.Minute, "the run to reach step 8", func() bool { return logStep(w, name) >= 8 })
	pid, err := strconv.Atoi(nodes[0].ProviderID) // the example's create hook: the agent's pid
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatalf("notice to the agent %d: %v", pid, err)
	}
	d := w.waitStatus(name, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed || d.Attempt != 2 {
		t.Fatalf("after the notice: %s attempt %d (%s)\n%s", d.Status, d.Attempt, d.StatusReason, w.logs(name))
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--all", "--download-path", out)
	resumed, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(out, name, "artifacts", "outputs", "resumed_at_0"))))
	if err != nil || resumed < 8 || resumed >= 120 {
		t.Errorf("attempt 2 started at step %d (%v), want the step saved at the notice (>= 8)", resumed, err)
	}
	if log := w.logs(name); !strings.Contains(log, "restored checkpoint of") || !strings.Contains(log, fmt.Sprintf("starting at step %d", resumed)) {
		t.Errorf("attempt 2's log does not say what it restored:\n%s", log)
	}
	checkPreemptionShown(t, w, name, 1)
	if d.Preemptions[0].LostSeconds > 20 {
		t.Errorf("a preemption with a notice lost %.0f s of work", d.Preemptions[0].LostSeconds)
	}
}

// checkPreemptionShown checks job show's text and the run detail for n preemptions resumed
// from a checkpoint.
func checkPreemptionShown(t *testing.T, w *ws, name string, n int) {
	t.Helper()
	d := w.show(name)
	if len(d.Preemptions) != n || d.Preemptions[n-1].ResumedFrom == nil || d.Preemptions[n-1].WaitSeconds == nil || d.Checkpoint == nil {
		t.Fatalf("run detail: preemptions %+v, checkpoint %+v", d.Preemptions, d.Checkpoint)
	}
	show := w.ok("job", "show", "-n", name).stdout
	for _, want := range []string{"Preempted:", fmt.Sprintf("%d×: ", n), "of work lost, resumed from the checkpoint of", "waited"} {
		if !strings.Contains(show, want) {
			t.Errorf("job show lacks %q:\n%s", want, show)
		}
	}
}

// A 2-node run whose second node is preempted without notice (the provider's preempted hook
// lists it): it is requeued from its periodic checkpoint and continues on the surviving node
// plus a replacement.
func TestPreemptionOfOneNodeContinuesOnReplacement(t *testing.T) {
	t.Parallel() // waits most of its time for steps and nodes: beside the other slow, independent tests
	w := newWS(t)
	dir := t.TempDir()
	spotCluster(t, w, dir, 3)
	writeFiles(t, dir, map[string]string{"job.yml": stepScript +
		"compute: spot\nresources: {instance_count: 2}\ndistribution: {type: pytorch}\nenvironment_variables: {HANGAR_CHECKPOINT_INTERVAL_SECONDS: \"1\", STEPS: \"240\"}\n"})
	name := w.create(filepath.Join(dir, "job.yml"))
	testwait.Within(t, time.Minute, "the run to reach step 10 with a checkpoint", func() bool {
		return logStep(w, name) >= 10 && w.show(name).Checkpoint != nil
	})
	before := map[string]string{} // provider id → node id
	for _, n := range w.cluster("spot").Nodes {
		before[n.ProviderID] = n.ID
	}
	if len(before) != 2 {
		t.Fatalf("nodes before the preemption: %v", before)
	}
	lost := ""
	for pid, id := range before {
		if lost == "" || id > before[lost] {
			lost = pid
		}
	}
	writeFiles(t, dir, map[string]string{"preempted": lost + "\n"})
	testwait.Within(t, 3*time.Minute, "the run to end", func() bool { return w.show(name).Status.Terminal() })
	d := w.show(name)
	if d.Status != job.Completed || d.Attempt != 2 {
		t.Fatalf("after the preemption: %s attempt %d (%s)\n%s\n%s", d.Status, d.Attempt, d.StatusReason, w.logs(name),
			w.ok("job", "show", "-n", name).stdout)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--all", "--download-path", out)
	resumed, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(out, name, "artifacts", "outputs", "resumed_at_0"))))
	if err != nil || resumed < 1 {
		t.Errorf("attempt 2 started at step %d (%v), want a saved step", resumed, err)
	}
	var dirs []string
	for rank := 0; rank < 2; rank++ {
		dirs = append(dirs, readFile(t, filepath.Join(out, name, "artifacts", "outputs", fmt.Sprintf("dir_%d", rank))))
	}
	kept, fresh := 0, 0
	for _, dir := range dirs {
		switch {
		case strings.Contains(dir, "/"+before[lost]+"/"):
			t.Errorf("attempt 2 ran on the preempted node %s: %s", before[lost], dir)
		case containsAny(dir, before):
			kept++
		default:
			fresh++
		}
	}
	if kept != 1 || fresh != 1 {
		t.Errorf("attempt 2's nodes (%q): want the survivor and one replacement; before: %v", dirs, before)
	}
	checkPreemptionShown(t, w, name, 1)
}

func containsAny(s string, nodes map[string]string) bool {
	for _, id := range nodes {
		if strings.Contains(s, "/"+id+"/") {
			return true
		}
	}
	return false
}
