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
	"github.com/hangar-ml/hangar/internal/remote/sshtest"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// threeStepYAML is prep → train → score, each step on the compute named, passing files: prep
// copies the pipeline's input file (uploaded by job create) into data.txt, train (a script in
// its code folder) copies it and adds a line into model.txt, score does the same into
// scores.txt, the pipeline's output "final". scoreNote is written by score, so that a rerun can
// change score alone.
func threeStepYAML(prep, train, score, scoreNote string) string {
	return fmt.Sprintf(`$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: three targets
settings:
  default_compute: azureml:local
inputs:
  raw:
    type: uri_file
    path: ./data/raw.txt
outputs:
  final:
    type: uri_folder
jobs:
  prep:
    type: command
    compute: %s
    command: cat ${{inputs.raw}} > ${{outputs.data}}/data.txt
    inputs:
      raw: ${{parent.inputs.raw}}
    outputs:
      data: {type: uri_folder}
  train:
    type: command
    compute: %s
    code: src
    command: bash train.sh ${{inputs.data}} ${{outputs.model}}
    inputs:
      data: ${{parent.jobs.prep.outputs.data}}
    outputs:
      model: {type: uri_folder}
  score:
    type: command
    compute: %s
    command: cat ${{inputs.model}}/model.txt > ${{outputs.scores}}/scores.txt && echo %s >> ${{outputs.scores}}/scores.txt
    inputs:
      model: ${{parent.jobs.train.outputs.model}}
    outputs:
      scores: ${{parent.outputs.final}}
`, prep, train, score, scoreNote)
}

// pipelineSteps returns a pipeline's steps by name, as job show -o json has them.
func pipelineSteps(t *testing.T, d api.RunDetail) map[string]api.PipelineStep {
	t.Helper()
	if d.Pipeline == nil {
		t.Fatalf("job show of %s has no pipeline steps", d.ID)
	}
	out := map[string]api.PipelineStep{}
	for _, s := range d.Pipeline.Steps {
		out[s.Name] = s
	}
	return out
}

// stepLogHas says a pipeline's step has a run whose log has s (false while the step has no run).
func stepLogHas(t *testing.T, w *ws, pipeline, step, s string) bool {
	t.Helper()
	st := pipelineSteps(t, w.show(pipeline))[step]
	return st.RunID != "" && logHas(w, st.RunID, s)
}

// downloadFinal downloads a pipeline's output "final" as a user does and returns scores.txt.
func downloadFinal(t *testing.T, w *ws, name string) string {
	t.Helper()
	dir := t.TempDir()
	w.ok("job", "download", "-n", name, "--output-name", "final", "--download-path", dir)
	return readFile(t, filepath.Join(dir, name, "named-outputs", "final", "scores.txt"))
}

// The pipeline: prep on the local target, train on a managed cluster, score on an
// attached SSH VM, each reading the files the step before wrote; the user downloads the final
// output. A rerun with score changed reuses prep and train from the step cache and job show
// says so; force_rerun reuses nothing.
func TestPipelineAcrossThreeTargets(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	w := newWS(t)
	dir := t.TempDir()
	work := filepath.Join(t.TempDir(), "vm-work")
	t.Cleanup(func() { stopSupervisors(filepath.Join(work, "runs")) })
	writeFiles(t, dir, map[string]string{
		"vm.yml":       vmYAML("vm", srv, srv.KeyFile, work),
		"pool.yml":     "name: pool\ntype: amlcompute\nsize: local-quarter\nmin_instances: 0\nmax_instances: 1\nidle_time_before_scale_down: 600\n",
		"data/raw.txt": "raw from the user\n",
		"src/train.sh": "cat \"$1/data.txt\" > \"$2/model.txt\" && echo trained >> \"$2/model.txt\"\n",
		"p.yml":        threeStepYAML("azureml:local", "azureml:pool", "azureml:vm", "scored"),
		"p2.yml":       threeStepYAML("azureml:local", "azureml:pool", "azureml:vm", "scored again"),
	})
	w.ok("compute", "attach", "-f", filepath.Join(dir, "vm.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "pool.yml"))

	name := w.create(filepath.Join(dir, "p.yml"))
	d := w.waitStatus(name, 4*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("pipeline %s is %s (%s)", name, d.Status, d.StatusReason)
	}
	steps := pipelineSteps(t, d)
	for step, compute := range map[string]string{"prep": "local", "train": "pool", "score": "vm"} {
		s := steps[step]
		if s.State != "completed" || s.RunID != name+"_"+step || s.ReusedFrom != "" {
			t.Errorf("step %s: %+v, want completed as its own run %s_%s", step, s, name, step)
		}
		if r := w.show(s.RunID); r.Compute != compute || r.PipelineOf == nil || r.PipelineOf.Pipeline != name {
			t.Errorf("run %s ran on %q (pipeline_of %+v), want %s, a step of %s", s.RunID, r.Compute, r.PipelineOf, compute, name)
		}
	}
	if got, want := downloadFinal(t, w, name), "raw from the user\ntrained\nscored\n"; got != want {
		t.Errorf("final output scores.txt = %q, want %q", got, want)
	}
	out := w.ok("job", "show", "-n", name).stdout
	for _, want := range []string{"Steps:", "✓ prep", "✓ train", "← prep", "✓ score", "← train", name + "_train", "pool", "vm"} {
		if !strings.Contains(out, want) {
			t.Errorf("job show lacks %q:\n%s", want, out)
		}
	}
	if list := w.ok("job", "list").stdout; strings.Count(list, "└ "+name+"_") != 3 {
		t.Errorf("job list does not mark the 3 steps of %s:\n%s", name, list)
	}

	again := w.create(filepath.Join(dir, "p2.yml"))
	d = w.waitStatus(again, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("rerun %s is %s (%s)", again, d.Status, d.StatusReason)
	}
	steps = pipelineSteps(t, d)
	for _, step := range []string{"prep", "train"} {
		if s := steps[step]; s.State != "completed" || s.ReusedFrom != name+"_"+step || s.RunID != "" {
			t.Errorf("rerun step %s: %+v, want reused from %s_%s", step, s, name, step)
		}
	}
	if s := steps["score"]; s.RunID != again+"_score" || s.ReusedFrom != "" {
		t.Errorf("rerun step score: %+v, want a run of its own (its command changed)", s)
	}
	out = w.ok("job", "show", "-n", again).stdout
	for _, want := range []string{"completed (reused)", "reused from " + name + "_prep", "reused from " + name + "_train"} {
		if !strings.Contains(out, want) {
			t.Errorf("job show of the rerun lacks %q:\n%s", want, out)
		}
	}
	if got, want := downloadFinal(t, w, again), "raw from the user\ntrained\nscored again\n"; got != want {
		t.Errorf("rerun's final output = %q, want %q", got, want)
	}

	forced := w.create(filepath.Join(dir, "p.yml"), "--set", "settings.force_rerun=true")
	d = w.waitStatus(forced, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	for step, s := range pipelineSteps(t, d) {
		if s.ReusedFrom != "" || s.RunID != forced+"_"+step {
			t.Errorf("force_rerun step %s: %+v, want a run of its own", step, s)
		}
	}
	if got, want := downloadFinal(t, w, forced), "raw from the user\ntrained\nscored\n"; got != want {
		t.Errorf("forced rerun's final output = %q, want %q", got, want)
	}
}

// failingYAML is a → c, and b on its own: a fails, b sleeps for bSleep seconds.
func failingYAML(cont bool, bSleep int) string {
	return fmt.Sprintf(`type: pipeline
settings:
  continue_on_step_failure: %t
jobs:
  a:
    command: echo failing; exit 3
    outputs:
      o: {type: uri_folder}
  b:
    command: sleep %d; echo b done
  c:
    command: ls ${{inputs.x}}
    inputs:
      x: ${{parent.jobs.a.outputs.o}}
`, cont, bSleep)
}

// A failing step without continue_on_step_failure: the running step is canceled, the one
// reading from the failure skipped, the pipeline Failed naming the step. With it, the
// independent branch completes (and the pipeline still fails, naming the step).
func TestPipelineFailingStep(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"stop.yml": failingYAML(false, 120), "go.yml": failingYAML(true, 1)})

	name := w.create(filepath.Join(dir, "stop.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Failed || !strings.Contains(d.StatusReason, "step a failed") {
		t.Errorf("pipeline is %s (%s), want Failed naming step a", d.Status, d.StatusReason)
	}
	steps := pipelineSteps(t, d)
	if s := steps["b"]; s.State != "canceled" || !strings.Contains(s.Reason, "step a did not complete") {
		t.Errorf("b: %+v, want canceled because a failed", s)
	}
	if s := steps["c"]; s.State != "skipped" || s.RunID != "" || !strings.Contains(s.Reason, "a failed") {
		t.Errorf("c: %+v, want skipped because a failed", s)
	}
	out := w.ok("job", "show", "-n", name).stdout
	for _, want := range []string{"Pipeline done:", "step a failed", "✗ a", "skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("job show lacks %q:\n%s", want, out)
		}
	}
	if r := w.show(name + "_b"); r.Status != job.Canceled {
		t.Errorf("b's run is %s, want Canceled", r.Status)
	}

	name = w.create(filepath.Join(dir, "go.yml"))
	d = w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	steps = pipelineSteps(t, d)
	if d.Status != job.Failed || steps["b"].State != "completed" || steps["c"].State != "skipped" {
		t.Errorf("with continue_on_step_failure: pipeline %s (%s), steps %+v: want b completed, c skipped, pipeline Failed",
			d.Status, d.StatusReason, steps)
	}
	if !strings.Contains(w.logs(name+"_b"), "b done") {
		t.Errorf("b's log lacks its line")
	}
}

// job cancel on a pipeline cancels its running step and starts no more.
func TestPipelineCancel(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"p.yml": `type: pipeline
jobs:
  first:
    command: echo started; sleep 120
    outputs:
      o: {type: uri_folder}
  second:
    command: ls ${{inputs.x}}
    inputs:
      x: ${{parent.jobs.first.outputs.o}}
`})
	name := w.create(filepath.Join(dir, "p.yml"))
	testwait.Within(t, time.Minute, "the first step to run", func() bool { return stepLogHas(t, w, name, "first", "started") })
	w.ok("job", "cancel", "-n", name, "--yes")
	d := w.waitStatus(name, time.Minute, job.Completed, job.Failed, job.Canceled)
	steps := pipelineSteps(t, d)
	if d.Status != job.Canceled || steps["first"].Status != job.Canceled || steps["second"].State != "skipped" {
		t.Errorf("pipeline %s, steps %+v: want Canceled, first canceled, second skipped", d.Status, steps)
	}
	if r := w.show(name + "_first"); !strings.Contains(eventsText(r), "its pipeline "+name+" was canceled") {
		t.Errorf("first's events lack why it was canceled: %s", eventsText(r))
	}
}

// A server killed with SIGKILL mid-pipeline: once restarted, the pipeline continues from the
// store and completes, each step run exactly once.
func TestPipelineSurvivesServerKill(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"p.yml": `type: pipeline
outputs:
  final: {type: uri_folder}
jobs:
  one:
    command: echo one started; sleep 3; echo one > ${{outputs.o}}/f.txt
    outputs:
      o: {type: uri_folder}
  two:
    command: sleep 1; cat ${{inputs.x}}/f.txt > ${{outputs.o}}/f.txt; echo two >> ${{outputs.o}}/f.txt
    inputs:
      x: ${{parent.jobs.one.outputs.o}}
    outputs:
      o: {type: uri_folder}
  three:
    command: cat ${{inputs.x}}/f.txt > ${{outputs.o}}/scores.txt; echo three >> ${{outputs.o}}/scores.txt
    inputs:
      x: ${{parent.jobs.two.outputs.o}}
    outputs:
      o: ${{parent.outputs.final}}
`})
	name := w.create(filepath.Join(dir, "p.yml"))
	testwait.Within(t, time.Minute, "the first step to run", func() bool { return stepLogHas(t, w, name, "one", "one started") })
	w.killServer()
	w.startServer()
	d := w.waitStatus(name, 3*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("pipeline is %s (%s) after the restart, want Completed", d.Status, d.StatusReason)
	}
	if got, want := downloadFinal(t, w, name), "one\ntwo\nthree\n"; got != want {
		t.Errorf("final output = %q, want %q", got, want)
	}
	all := t.TempDir() // --all: a pipeline has no artifacts of its own, only its outputs
	w.ok("job", "download", "-n", name, "--all", "--download-path", all)
	if got := readFile(t, filepath.Join(all, name, "named-outputs", "final", "scores.txt")); got != "one\ntwo\nthree\n" {
		t.Errorf("--all: final output = %q", got)
	}
	var runs []api.RunDetail
	if err := json.Unmarshal([]byte(w.ok("job", "list", "-o", "json").stdout), &runs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range runs {
		if r.PipelineOf != nil && r.PipelineOf.Pipeline == name {
			n++
			if r.Attempt > 1 {
				t.Errorf("step %s ran %d times", r.ID, r.Attempt)
			}
		}
	}
	if n != 3 || len(runs) != 4 {
		t.Errorf("job list has %d runs, %d of them steps, want the pipeline and its 3 steps", len(runs), n)
	}
}

// A sweep step runs its trials as children of its own, and the step reading its output reads
// the best trial's.
func TestPipelineSweepStep(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"p.yml": `type: pipeline
jobs:
  tune:
    type: sweep
    trial:
      command: echo "{\"name\":\"acc\",\"value\":${{search_space.lr}}}" >> $HANGAR_METRICS_FILE; echo lr ${{search_space.lr}} > ${{outputs.model}}/m.txt
    sampling_algorithm: grid
    search_space:
      lr: {type: choice, values: [0.1, 0.5, 0.3]}
    objective: {goal: maximize, primary_metric: acc}
    limits: {max_total_trials: 3, max_concurrent_trials: 3}
    outputs:
      model: {type: uri_folder}
  use:
    command: cat ${{inputs.model}}/m.txt
    inputs:
      model: ${{parent.jobs.tune.outputs.model}}
`})
	name := w.create(filepath.Join(dir, "p.yml"))
	d := w.waitStatus(name, 2*time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed || d.Compute != "local" {
		t.Fatalf("pipeline is %s (%s) on %q, want Completed, shown on the default target", d.Status, d.StatusReason, d.Compute)
	}
	tune := w.show(name + "_tune")
	if tune.Sweep == nil || len(tune.Sweep.Trials) != 3 || tune.PipelineOf == nil || tune.PipelineOf.Step != "tune" {
		t.Fatalf("tune: sweep %+v, pipeline_of %+v: want a sweep of 3 trials, a step of %s", tune.Sweep, tune.PipelineOf, name)
	}
	if got := w.logs(name + "_use"); !strings.Contains(got, "lr 0.5") {
		t.Errorf("use read %q, want the best trial's output (lr 0.5)", got)
	}
}
