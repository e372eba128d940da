package controller

import (
	"slices"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pipeline"
	"github.com/hangar-ml/hangar/internal/store"
)

// pstep is a deterministic command step on the local target writing outputs outs and reading
// each of from ("input=step.output").
func pstep(command string, outs []string, from ...string) job.PipelineStep {
	st := job.PipelineStep{Spec: job.Spec{Type: "command", Command: command, Compute: "local"}, Deterministic: true}
	for _, o := range outs {
		if st.Spec.Outputs == nil {
			st.Spec.Outputs = map[string]job.Output{}
		}
		st.Spec.Outputs[o] = job.Output{Type: "uri_folder"}
	}
	for _, f := range from {
		in, ref, _ := strings.Cut(f, "=")
		step, out, _ := strings.Cut(ref, ".")
		if st.From == nil {
			st.From = map[string]job.StepRef{}
		}
		st.From[in] = job.StepRef{Step: step, Output: out}
	}
	return st
}

// chainSpec is prep → train → score, the pipeline's own output "scores" bound to score's.
func chainSpec() job.Spec {
	train := pstep("python train.py --data ${{inputs.data}} --model ${{outputs.model}}", []string{"model"}, "data=prep.data")
	// As the decoder leaves an input read from another step: declared, with no path.
	train.Spec.Inputs = map[string]job.Input{"data": {Type: "uri_folder", Mode: "download"}}
	return job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{
		Steps: map[string]job.PipelineStep{
			"prep":  pstep("python prep.py --out ${{outputs.data}}", []string{"data"}),
			"train": train,
			"score": pstep("python score.py --model ${{inputs.model}} --out ${{outputs.scores}}", []string{"scores"}, "model=train.model"),
		},
		Outputs: map[string]job.StepRef{"scores": {Step: "score", Output: "scores"}},
	}}
}

func (f *fixture) createPipeline(t testing.TB, sp job.Spec) *job.Run {
	t.Helper()
	p, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: sp})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return p
}

func (f *fixture) pipelinePass(t testing.TB) {
	t.Helper()
	if err := f.parents().PipelinePass(t.Context()); err != nil {
		t.Fatalf("PipelinePass: %v", err)
	}
}

// complete runs a step's run to Completed with its outputs registered as manifests hash-<output>-<run>.
func (f *fixture) complete(t testing.TB, id string) {
	t.Helper()
	f.reconcile(t)
	f.report(t, id, job.Running)
	if _, err := f.c.Store.RunWrites.UpdateRun(t.Context(), id, func(r *job.Run) ([]job.Event, error) {
		r.NamedOutputs = map[string]string{}
		for o := range r.Spec.Outputs {
			r.NamedOutputs[o] = "hash-" + o + "-" + id
		}
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	f.report(t, id, job.Completed)
}

func (f *fixture) steps(t testing.TB, p string) map[string]store.Step {
	t.Helper()
	ss, err := f.c.Store.Parents.PipelineSteps(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.Step{}
	for _, s := range ss {
		out[s.Name] = s
	}
	return out
}

func (f *fixture) detail(t testing.TB, p string) *api.PipelineDetail {
	t.Helper()
	d, err := f.c.Parents.PipelineDetail(t.Context(), f.run(t, p))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A pipeline is a parent run no backend sees; each step is a run of its own, named
// <pipeline>_<step> and tagged as its child, created once its producers completed, its inputs
// bound to their outputs; the pipeline ends Completed with its own output bound to the step's.
func TestPipelineRunsStepsPassingOutputs(t *testing.T) {
	f := newFixture(t)
	p := f.createPipeline(t, chainSpec())
	f.reconcile(t)
	f.pipelinePass(t)
	f.reconcile(t)
	if got := f.fake.Submitted(); !slices.Equal(got, []string{p.ID + "_prep"}) {
		t.Fatalf("backend got %v, want prep alone and never the pipeline", got)
	}
	if r := f.run(t, p.ID); r.Status != job.Running {
		t.Errorf("pipeline is %s, want Running once its first step started", r.Status)
	}
	prep := f.run(t, p.ID+"_prep")
	if prep.Tags["mlflow.parentRunId"] != p.ID || prep.Tags["azureml.pipeline"] != p.ID || prep.ExperimentName != p.ExperimentName {
		t.Errorf("prep's tags %v (experiment %s), want the child tags naming %s", prep.Tags, prep.ExperimentName, p.ID)
	}
	f.complete(t, p.ID+"_prep")
	f.pipelinePass(t)
	train := f.run(t, p.ID+"_train")
	in := train.Spec.Inputs["data"]
	if in.Manifest != "hash-data-"+p.ID+"_prep" || in.Path != "azureml://jobs/"+p.ID+"_prep/outputs/data" || in.Type != "uri_folder" || in.Mode != "download" {
		t.Errorf("train's input data = %+v, want prep's output data", in)
	}
	f.complete(t, p.ID+"_train")
	f.pipelinePass(t)
	f.complete(t, p.ID+"_score")
	f.pipelinePass(t)
	r := f.run(t, p.ID)
	if r.Status != job.Completed {
		t.Fatalf("pipeline is %s (%s), want Completed", r.Status, r.StatusReason)
	}
	if got := r.NamedOutputs["scores"]; got != "hash-scores-"+p.ID+"_score" {
		t.Errorf("pipeline output scores = %q, want score's output (job download --output-name scores)", got)
	}
	d := f.detail(t, p.ID)
	var names []string
	for _, s := range d.Steps {
		names = append(names, s.Name+":"+s.State+":"+s.RunID)
		if s.Started == nil || s.Ended == nil {
			t.Errorf("step %s has no times: %+v", s.Name, s)
		}
	}
	want := []string{"prep:completed:" + p.ID + "_prep", "train:completed:" + p.ID + "_train", "score:completed:" + p.ID + "_score"}
	if !slices.Equal(names, want) {
		t.Errorf("detail steps = %v, want %v", names, want)
	}
	if d.Steps[1].Deps[0] != "prep" {
		t.Errorf("train's deps = %v, want prep", d.Steps[1].Deps)
	}
	if len(f.fake.Submitted()) != 3 {
		t.Errorf("backend got %v, want the three steps once each", f.fake.Submitted())
	}
}

// runChain runs chainSpec to completion and returns the pipeline.
func (f *fixture) runChain(t testing.TB, sp job.Spec) *job.Run {
	t.Helper()
	p := f.createPipeline(t, sp)
	for _, s := range []string{"prep", "train", "score"} {
		f.pipelinePass(t)
		if st := f.steps(t, p.ID)[s]; st.RunID != "" {
			f.complete(t, st.RunID)
		}
	}
	f.pipelinePass(t)
	return f.run(t, p.ID)
}

// A second run of the same pipeline reuses every step from the step cache in one pass: no run
// is created, each step names the run it reused, and the pipeline's output is the first run's.
// A changed command misses from that step on; force_rerun reuses nothing.
func TestPipelineReusesStepsFromTheCache(t *testing.T) {
	f := newFixture(t)
	first := f.runChain(t, chainSpec())
	if first.Status != job.Completed {
		t.Fatalf("first pipeline %s", first.Status)
	}
	submitted := len(f.fake.Submitted())
	again := f.createPipeline(t, chainSpec())
	f.pipelinePass(t)
	r := f.run(t, again.ID)
	if r.Status != job.Completed {
		t.Fatalf("cached pipeline is %s (%s) after one pass, want Completed", r.Status, r.StatusReason)
	}
	if n := len(f.fake.Submitted()); n != submitted {
		t.Errorf("backend got %d runs more, want none", n-submitted)
	}
	for _, s := range f.detail(t, again.ID).Steps {
		if s.State != "completed" || s.ReusedFrom != first.ID+"_"+s.Name || s.RunID != "" {
			t.Errorf("step %+v, want completed, reused from %s_%s", s, first.ID, s.Name)
		}
	}
	if r.NamedOutputs["scores"] != "hash-scores-"+first.ID+"_score" {
		t.Errorf("reused pipeline's output = %q, want the first run's", r.NamedOutputs["scores"])
	}

	changed := chainSpec()
	st := changed.Pipeline.Steps["train"]
	st.Spec.Command += " --epochs 2"
	changed.Pipeline.Steps["train"] = st
	p := f.createPipeline(t, changed)
	f.pipelinePass(t)
	steps := f.steps(t, p.ID)
	if steps["prep"].ReusedFrom != first.ID+"_prep" || steps["train"].RunID != p.ID+"_train" || steps["train"].ReusedFrom != "" {
		t.Errorf("changed train: steps %+v, want prep reused and train run", steps)
	}

	forced := chainSpec()
	forced.Pipeline.Settings.ForceRerun = true
	p = f.createPipeline(t, forced)
	f.pipelinePass(t)
	if s := f.steps(t, p.ID)["prep"]; s.RunID != p.ID+"_prep" || s.ReusedFrom != "" {
		t.Errorf("force_rerun: prep %+v, want a run of its own", s)
	}

	nondet := chainSpec()
	st = nondet.Pipeline.Steps["prep"]
	st.Deterministic = false
	nondet.Pipeline.Steps["prep"] = st
	p = f.createPipeline(t, nondet)
	f.pipelinePass(t)
	if s := f.steps(t, p.ID)["prep"]; s.RunID != p.ID+"_prep" {
		t.Errorf("is_deterministic false: prep %+v, want a run of its own", s)
	}
}

// branches is a → c and b independent.
func branches(cont bool) job.Spec {
	return job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{
		Settings: job.PipelineSettings{ContinueOnStepFailure: cont},
		Steps: map[string]job.PipelineStep{
			"a": pstep("python a.py --out ${{outputs.o}}", []string{"o"}),
			"b": pstep("python b.py", nil),
			"c": pstep("python c.py --in ${{inputs.x}}", nil, "x=a.o"),
		},
	}}
}

// A failed step without continue_on_step_failure cancels the running steps (saying why), skips
// the rest, and fails the pipeline naming the step; with it, the independent branch completes.
func TestPipelineFailingStep(t *testing.T) {
	f := newFixture(t)
	p := f.createPipeline(t, branches(false))
	f.pipelinePass(t)
	f.reconcile(t)
	f.report(t, p.ID+"_a", job.Running)
	f.report(t, p.ID+"_a", job.Failed)
	f.pipelinePass(t)
	b := f.run(t, p.ID+"_b")
	if b.Status != job.CancelRequested || !strings.Contains(b.StatusReason, "step a did not complete") {
		t.Errorf("b is %s (%s), want canceled naming a", b.Status, b.StatusReason)
	}
	f.reconcile(t)
	f.report(t, p.ID+"_b", job.Canceled)
	f.pipelinePass(t)
	r := f.run(t, p.ID)
	if r.Status != job.Failed || !strings.Contains(r.StatusReason, "step a failed") {
		t.Errorf("pipeline is %s (%s), want Failed naming step a", r.Status, r.StatusReason)
	}
	d := f.detail(t, p.ID)
	states := map[string]string{}
	for _, s := range d.Steps {
		states[s.Name] = s.State
	}
	if states["a"] != "failed" || states["b"] != "canceled" || states["c"] != "skipped" {
		t.Errorf("step states %v, want a failed, b canceled, c skipped", states)
	}
	if !strings.Contains(d.Reason, "step a failed") {
		t.Errorf("detail reason %q, want it naming a", d.Reason)
	}

	g := newFixture(t)
	p = g.createPipeline(t, branches(true))
	g.pipelinePass(t)
	g.reconcile(t)
	g.report(t, p.ID+"_a", job.Running)
	g.report(t, p.ID+"_a", job.Failed)
	g.pipelinePass(t)
	if b := g.run(t, p.ID+"_b"); b.Status.Terminal() || b.Status == job.CancelRequested {
		t.Errorf("with continue_on_step_failure b is %s, want it left running", b.Status)
	}
	g.complete(t, p.ID+"_b")
	g.pipelinePass(t)
	r = g.run(t, p.ID)
	if r.Status != job.Failed || !strings.Contains(r.StatusReason, "step a failed") || !strings.Contains(r.StatusReason, "c skipped") {
		t.Errorf("pipeline is %s (%s), want Failed naming a, c skipped", r.Status, r.StatusReason)
	}
	if b := g.run(t, p.ID+"_b"); b.Status != job.Completed {
		t.Errorf("b is %s, want the independent branch completed", b.Status)
	}
}

// Canceling a pipeline cancels its running steps; it is Canceled once they ended, and the
// steps never started are skipped.
func TestPipelineCancelCascades(t *testing.T) {
	f := newFixture(t)
	p := f.createPipeline(t, chainSpec())
	f.pipelinePass(t)
	f.reconcile(t)
	if _, err := f.c.Cancel(t.Context(), p.ID); err != nil {
		t.Fatal(err)
	}
	f.pipelinePass(t)
	if r := f.run(t, p.ID+"_prep"); r.Status != job.CancelRequested || !strings.Contains(r.StatusReason, "its pipeline "+p.ID+" was canceled") {
		t.Errorf("prep is %s (%s), want CancelRequested by the pipeline", r.Status, r.StatusReason)
	}
	if r := f.run(t, p.ID); r.Status != job.CancelRequested {
		t.Errorf("pipeline is %s while its steps stop, want CancelRequested", r.Status)
	}
	f.report(t, p.ID+"_prep", job.Canceled)
	f.pipelinePass(t)
	if r := f.run(t, p.ID); r.Status != job.Canceled {
		t.Errorf("pipeline is %s (%s), want Canceled", r.Status, r.StatusReason)
	}
	if s := f.steps(t, p.ID)["train"]; s.State != "skipped" {
		t.Errorf("train %+v, want skipped", s)
	}
}

// A restarted server (a new controller over the same database) continues from the store: no
// step is started twice, and a pass that re-creates a step already created writes nothing.
func TestPipelineContinuesAfterRestart(t *testing.T) {
	f := newFixture(t)
	p := f.createPipeline(t, chainSpec())
	f.pipelinePass(t)
	f.complete(t, p.ID+"_prep")
	g := &fixture{c: New(f.c.Config), fake: f.fake, clock: f.clock}
	var decided []map[string]pipeline.StepState
	g.pipelineDecide = func(pl job.PipelineRun, st pipeline.State) pipeline.Decision {
		decided = append(decided, st.Steps)
		return pipeline.Decide(pl, st)
	}
	g.pipelinePass(t)
	g.pipelinePass(t)
	if decided[0]["prep"] != pipeline.Completed {
		t.Errorf("after the restart the planner saw %v, want prep completed from the store", decided[0])
	}
	if err := g.c.CreateStepRun(t.Context(), f.run(t, p.ID), "train", "", f.run(t, p.ID+"_train").Spec); err != nil {
		t.Fatalf("CreateStepRun again: %v", err)
	}
	runs, err := g.c.Store.Runs.List(t.Context(), storeAll)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	if want := []string{p.ID, p.ID + "_prep", p.ID + "_train"}; !slices.Equal(ids, want) {
		t.Errorf("runs %v, want %v (no step twice)", ids, want)
	}
	g.complete(t, p.ID+"_train")
	g.pipelinePass(t)
	g.complete(t, p.ID+"_score")
	g.pipelinePass(t)
	if r := g.run(t, p.ID); r.Status != job.Completed {
		t.Errorf("pipeline is %s after the restart, want Completed", r.Status)
	}
}

// A step that cannot run is refused at create, naming the step and field; a pipeline with no
// step is refused too.
func TestCreatePipelineRefusals(t *testing.T) {
	f := newFixture(t)
	bad := chainSpec()
	st := bad.Pipeline.Steps["train"]
	st.Spec.Compute = "nowhere"
	bad.Pipeline.Steps["train"] = st
	_, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: bad})
	wantKind(t, err, Invalid, "jobs.train.compute", "nowhere")

	bad = chainSpec()
	st = bad.Pipeline.Steps["score"]
	st.Spec.Command = "python score.py ${{inputs.missing}}"
	bad.Pipeline.Steps["score"] = st
	_, err = f.c.Create(t.Context(), api.CreateJobRequest{Spec: bad})
	wantKind(t, err, Invalid, "jobs.score.command", "missing")

	_, err = f.c.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{}}})
	wantKind(t, err, Invalid, "jobs")

	// The API takes JSON that no decoder checked: a step's name becomes part of a run name.
	bad = chainSpec()
	bad.Pipeline.Steps["../../x"] = pstep("true", nil)
	_, err = f.c.Create(t.Context(), api.CreateJobRequest{Spec: bad})
	wantKind(t, err, Invalid, "jobs.../../x", "step's name")

	bad = chainSpec()
	bad.Pipeline.Steps["nested"] = job.PipelineStep{Spec: job.Spec{Type: "command", Command: "true", Pipeline: &job.PipelineRun{}}}
	_, err = f.c.Create(t.Context(), api.CreateJobRequest{Spec: bad})
	wantKind(t, err, Invalid, "jobs.nested", "pipeline of its own")

	bad = chainSpec()
	bad.Pipeline.Steps["spark"] = job.PipelineStep{Spec: job.Spec{Type: "spark", Command: "true"}}
	_, err = f.c.Create(t.Context(), api.CreateJobRequest{Spec: bad})
	wantKind(t, err, Invalid, "jobs.spark.type", "spark steps are not supported")

	bad = chainSpec()
	bad.Pipeline.Settings.DefaultCompute = "nowhere"
	_, err = f.c.Create(t.Context(), api.CreateJobRequest{Spec: bad})
	wantKind(t, err, Invalid, "settings.default_compute", "nowhere")
	runs, _ := f.c.Store.Runs.List(t.Context(), storeAll)
	if len(runs) != 0 {
		t.Errorf("refused pipelines left runs %v", runs)
	}
}

// A sweep step is a sweep: the parent loop creates its trials, and the steps reading its
// output read the best trial's (Azure's sweep job outputs); a sweep step whose trial command
// does not bind is refused at create.
func TestPipelineSweepStep(t *testing.T) {
	f := newSweepFixture(t)
	tune := job.PipelineStep{Spec: sweepSpec(1, 1), Deterministic: true}
	tune.Spec.Command = "python train.py --lr ${{search_space.lr}} --out ${{outputs.model}}"
	tune.Spec.Outputs = map[string]job.Output{"model": {Type: "uri_folder"}}
	sp := job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{Steps: map[string]job.PipelineStep{
		"tune": tune,
		"use":  pstep("python use.py --model ${{inputs.model}}", nil, "model=tune.model"),
	}}}
	p := f.createPipeline(t, sp)
	f.pipelinePass(t)
	sw := f.run(t, p.ID+"_tune")
	if sw.Spec.Sweep == nil || sw.Spec.Sweep.Config.Sampling.Seed == 0 {
		t.Fatalf("tune's run %+v, want a sweep with its seed chosen", sw.Spec)
	}
	f.sweepPass(t)
	trial := p.ID + "_tune_0"
	f.reconcile(t)
	if got := f.fake.Submitted(); !slices.Equal(got, []string{trial}) {
		t.Fatalf("backend got %v, want the trial alone (neither the pipeline nor the sweep)", got)
	}
	f.report(t, trial, job.Running)
	f.logMetric(t, trial, 0.9)
	if _, err := f.c.Store.RunWrites.UpdateRun(t.Context(), trial, func(r *job.Run) ([]job.Event, error) {
		r.NamedOutputs = map[string]string{"model": "hash-best-model"}
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	f.report(t, trial, job.Completed)
	f.sweepPass(t)
	if r := f.run(t, sw.ID); r.Status != job.Completed || r.NamedOutputs["model"] != "hash-best-model" {
		t.Fatalf("sweep step is %s with outputs %v, want Completed with the best trial's", r.Status, r.NamedOutputs)
	}
	f.pipelinePass(t)
	if in := f.run(t, p.ID+"_use").Spec.Inputs["model"]; in.Manifest != "hash-best-model" {
		t.Errorf("use's input model = %+v, want the best trial's output", in)
	}

	bad := sp
	bad.Pipeline = &job.PipelineRun{Steps: map[string]job.PipelineStep{"tune": tune}}
	st := bad.Pipeline.Steps["tune"]
	st.Spec.Command = "python train.py --lr ${{search_space.nope}}"
	bad.Pipeline.Steps["tune"] = st
	_, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: bad})
	wantKind(t, err, Invalid, "jobs.tune.trial")
}
