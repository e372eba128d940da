package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// trainPy logs the primary metric through the metrics file, one report per step: the closer lr
// is to 0.3, the higher the accuracy.
const trainPy = `import argparse, json, os, time
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, required=True)
p.add_argument("--pause", type=float, default=0)
a = p.parse_args()
acc = 1 - (a.lr - 0.3) ** 2
for step in range(3):
    with open(os.environ["HANGAR_METRICS_FILE"], "a") as f:
        f.write(json.dumps({"name": "acc", "value": acc - (2 - step) * 0.01, "step": step}) + "\n")
    time.sleep(a.pause)
print("trained with lr", a.lr)
`

func sweepYAML(trials, concurrent int, pause, compute string) string {
	return fmt.Sprintf(`$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
trial:
  code: src
  command: python3 train.py --lr ${{search_space.lr}} --pause ${{inputs.pause}}
inputs:
  pause: %s
compute: %s
sampling_algorithm: grid
search_space:
  lr:
    type: choice
    values: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0]
objective:
  goal: maximize
  primary_metric: acc
limits:
  max_total_trials: %d
  max_concurrent_trials: %d
  timeout: 600
`, pause, compute, trials, concurrent)
}

func writeSweep(t *testing.T, trials, concurrent int, pause, compute string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"src/train.py": trainPy, "sweep.yml": sweepYAML(trials, concurrent, pause, compute)})
	return filepath.Join(dir, "sweep.yml")
}

// compactJSON is raw without the indentation -o json adds.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// checkSweep checks an ended sweep as job show reports it: every trial Completed, each index
// once and each parameter set once, and the best trial the one with lr 0.3.
func checkSweep(t *testing.T, w *ws, name string, trials int) api.RunDetail {
	t.Helper()
	d := w.show(name)
	if d.Status != job.Completed || d.Sweep == nil {
		t.Fatalf("sweep %s is %s (%s), want Completed with its trials", name, d.Status, d.StatusReason)
	}
	var idx []int
	var lrs []string
	for _, tr := range d.Sweep.Trials {
		idx = append(idx, tr.Index)
		lrs = append(lrs, compactJSON(tr.Params))
		if tr.Status != job.Completed || tr.Metric == nil || tr.RunID != fmt.Sprintf("%s_%d", name, tr.Index) {
			t.Errorf("trial %d (%s) is %s with metric %v", tr.Index, tr.RunID, tr.Status, tr.Metric)
		}
	}
	want := make([]int, trials)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(idx, want) {
		t.Errorf("trial indexes %v, want each of 0..%d once", idx, trials-1)
	}
	slices.Sort(lrs)
	if len(slices.Compact(lrs)) != trials {
		t.Errorf("parameter sets %v: one was run twice", lrs)
	}
	best := d.Sweep.BestChildRunID
	if compactJSON(d.Sweep.BestParams) != `{"lr":0.3}` || best == "" || d.Properties["best_child_run_id"] != best {
		t.Errorf("best %s %s (properties %v), want the trial with lr 0.3 as best_child_run_id", best, d.Sweep.BestParams, d.Properties)
	}
	if d.Sweep.BestMetric == nil || *d.Sweep.BestMetric != 1 {
		t.Errorf("best metric %v, want 1", d.Sweep.BestMetric)
	}
	return d
}

// A sweep on the local target: its trials are ordinary runs that log the metric through the
// metrics file; the sweep completes with the right best trial, shown by job show and job list.
func TestSweepLocal(t *testing.T) {
	w := newWS(t)
	name := w.create(writeSweep(t, 6, 3, "0", "local"))
	w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	d := checkSweep(t, w, name, 6)
	if !strings.Contains(d.StatusReason, "max_total_trials 6 reached") {
		t.Errorf("sweep ended with %q, want why", d.StatusReason)
	}
	out := w.ok("job", "show", "-n", name).stdout
	for _, want := range []string{"Objective:", "maximize acc", "Best trial:", d.Sweep.BestChildRunID + "  acc = 1",
		"Best params:", "lr=0.3", "Trials:", "#  NAME", "STATUS", "PARAMS", "ACC", name + "_0"} {
		if !strings.Contains(out, want) {
			t.Errorf("job show lacks %q:\n%s", want, out)
		}
	}
	trial := w.ok("job", "show", "-n", name+"_2").stdout
	if !strings.Contains(trial, "Sweep:") || !strings.Contains(trial, name+" (trial 2)") || !strings.Contains(trial, "lr = 0.3 (number)") {
		t.Errorf("job show of a trial lacks its sweep and its parameter:\n%s", trial)
	}
	list := w.ok("job", "list").stdout
	if n := strings.Count(list, "└ "+name+"_"); n != 6 {
		t.Errorf("job list marks %d trials, want 6:\n%s", n, list)
	}
	trials, err := w.client().Jobs.SweepTrials(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials.Trials) != 6 || len(trials.Trials[0].Series) != 3 {
		t.Errorf("trials route = %+v, want 6 trials with their series of 3", trials)
	}
}

// A server killed with SIGKILL mid-sweep: once restarted, the sweep continues from the store
// and completes with no trial lost and none started twice.
func TestSweepSurvivesServerKill(t *testing.T) {
	w := newWS(t)
	name := w.create(writeSweep(t, 6, 2, "1", "local"))
	testwait.Within(t, time.Minute, "the sweep's first trials to run", func() bool {
		d := w.show(name)
		return d.Sweep != nil && len(d.Sweep.Trials) >= 2 && d.Sweep.Trials[0].Status == job.Running
	})
	w.killServer()
	w.startServer()
	w.waitStatus(name, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	checkSweep(t, w, name, 6)
	var runs []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &runs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range runs {
		if r.TrialOf != nil && r.TrialOf.Sweep == name {
			n++
		}
	}
	if n != 6 || len(runs) != 7 {
		t.Errorf("job list has %d runs, %d of them trials, want the sweep and its 6 trials", len(runs), n)
	}
}

// A sweep of 20 trials on a managed cluster that scales out to 2 nodes for them.
func TestSweepOnCluster(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"cluster.yml": `name: pool
type: amlcompute
size: local-quarter
min_instances: 0
max_instances: 2
idle_time_before_scale_down: 30
`})
	w.ok("compute", "create", "-f", filepath.Join(dir, "cluster.yml"))
	name := w.create(writeSweep(t, 20, 4, "0", "azureml:pool"))
	maxNodes := 0
	testwait.Within(t, 4*time.Minute, "the sweep to end", func() bool {
		maxNodes = max(maxNodes, len(w.cluster("pool").Nodes))
		return w.show(name).Status.Terminal()
	})
	checkSweep(t, w, name, 20)
	if maxNodes != 2 {
		t.Errorf("the cluster peaked at %d nodes, want 2", maxNodes)
	}
}

// Early termination: bandit stops the trial far behind the best, and job show says why.
func TestSweepEarlyTermination(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		// The good trial reports 1.0 many times at once; the bad one reports 0.1 slowly, for
		// long: only the policy ends it early.
		"src/run.sh": `q=$1
if [ "$q" = good ]; then
  for i in $(seq 0 99); do echo "{\"name\":\"acc\",\"value\":1.0,\"step\":$i}" >> "$HANGAR_METRICS_FILE"; done
  exit 0
fi
sleep 2
for i in $(seq 0 299); do echo "{\"name\":\"acc\",\"value\":0.1,\"step\":$i}" >> "$HANGAR_METRICS_FILE"; sleep 1; done
`,
		"sweep.yml": `type: sweep
trial:
  code: src
  command: bash run.sh ${{search_space.q}}
sampling_algorithm: grid
search_space:
  q: {type: choice, values: [good, bad]}
objective: {goal: maximize, primary_metric: acc}
limits: {max_total_trials: 2, max_concurrent_trials: 2}
early_termination: {type: bandit, slack_factor: 0.1, evaluation_interval: 1}
`})
	name := w.create(filepath.Join(dir, "sweep.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed || d.Sweep == nil || len(d.Sweep.Trials) != 2 {
		t.Fatalf("sweep is %s (%s), want Completed with 2 trials", d.Status, d.StatusReason)
	}
	var bad api.SweepTrial
	for _, tr := range d.Sweep.Trials {
		if compactJSON(tr.Params) == `{"q":"bad"}` {
			bad = tr
		}
	}
	if bad.Status != job.Canceled || !strings.HasPrefix(bad.Stopped, "bandit: 0.1 at report") {
		t.Errorf("bad trial is %s, stopped %q: want Canceled by bandit", bad.Status, bad.Stopped)
	}
	out := w.ok("job", "show", "-n", bad.RunID).stdout
	if !strings.Contains(out, "Stopped by sweep:  bandit: 0.1 at report") && !strings.Contains(out, "Stopped by sweep: bandit: 0.1") {
		t.Errorf("job show of the stopped trial lacks why:\n%s", out)
	}
	if d.Sweep.BestChildRunID == bad.RunID {
		t.Errorf("the stopped trial is the best")
	}
}

// job cancel on a sweep cancels its running trials and starts no more.
func TestSweepCancel(t *testing.T) {
	w := newWS(t)
	name := w.create(writeSweep(t, 6, 2, "30", "local"))
	testwait.Within(t, time.Minute, "two trials to run", func() bool {
		d := w.show(name)
		return d.Sweep != nil && len(d.Sweep.Trials) == 2 && d.Sweep.Trials[0].Status == job.Running && d.Sweep.Trials[1].Status == job.Running
	})
	w.ok("job", "cancel", "-n", name, "--yes")
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Canceled || len(d.Sweep.Trials) != 2 {
		t.Fatalf("sweep is %s with %d trials, want Canceled with its 2", d.Status, len(d.Sweep.Trials))
	}
	for _, tr := range d.Sweep.Trials {
		if r := w.show(tr.RunID); r.Status != job.Canceled || !strings.Contains(eventsText(r), "its sweep "+name+" was canceled") {
			t.Errorf("trial %s is %s (%s), want Canceled because of its sweep", tr.RunID, r.Status, eventsText(r))
		}
	}
}

func eventsText(d api.RunDetail) string {
	var parts []string
	for _, e := range d.Events {
		parts = append(parts, string(e.To)+": "+e.Reason)
	}
	return strings.Join(parts, "; ")
}
