package endpoints

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
)

// batchFixture is a workspace with model m:1 registered and batch endpoint ep1.
func batchFixture(t *testing.T) (*fixture, serving.BatchDeployment) {
	t.Helper()
	f := newFixture(t)
	h := putTree(t, f, map[string]string{"weights.json": `{"w": 3}`})
	createModel(t, f, model.Spec{Name: "m", Path: "/client/model"}, h)
	code := putTree(t, f, map[string]string{"score.py": "def init(): pass\n"})
	if _, err := f.s.PutBatchEndpoint(t.Context(), serving.BatchEndpoint{Name: "ep1"}, true); err != nil {
		t.Fatal(err)
	}
	d := serving.BatchDeployment{Name: "rows", Endpoint: "ep1", Model: serving.ModelRef{Ref: "m:1"},
		CodeSnapshot: code, ScoringScript: "score.py", Compute: "local", InstanceCount: 1,
		Settings: serving.DefaultBatchSettings()}
	return f, d
}

func TestInvokeBatchQueuesAParallelJob(t *testing.T) {
	f, d := batchFixture(t)
	ctx := t.Context()
	if _, err := f.s.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	summary := d
	summary.Name, summary.Settings.OutputAction = "summary", serving.OutputSummaryOnly
	if _, err := f.s.PutBatchDeployment(ctx, summary, true, false); err != nil {
		t.Fatal(err)
	}
	e, err := f.s.BatchEndpoint(ctx, "ep1")
	if err != nil || e.Spec.DefaultDeployment != "rows" || e.Spec.AuthMode != serving.AuthAADToken {
		t.Fatalf("endpoint %+v, %v: want the first deployment as default and aad_token", e, err)
	}
	data := putTree(t, f, map[string]string{"a.txt": "1", "b.txt": "2"})
	run, err := f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Input: job.Input{Type: job.URIFolder, Manifest: data}})
	if err != nil {
		t.Fatal(err)
	}
	sp := run.Spec
	p := sp.Parallel
	switch {
	case sp.Type != "command" || !strings.Contains(sp.Command, "--append-row-to ${{outputs.score}}"):
		t.Errorf("command %q (type %s): want the parallel driver writing to outputs.score", sp.Command, sp.Type)
	case p == nil || p.AppendRowTo != "score" || p.OutputFileName != "predictions.csv" || p.ModelInput != "model" ||
		p.ModelFolder != "model" || p.EntryScript != "score.py" || p.MaxRetries != 3 || p.TimeoutSeconds != 30:
		t.Errorf("parallel settings %+v", p)
	case sp.Inputs["model"].Manifest == "" || sp.Inputs["input_data"].Manifest != data || sp.Resources.InstanceCount != 1:
		t.Errorf("inputs %+v, resources %+v", sp.Inputs, sp.Resources)
	case run.Tags[serving.TagBatchEndpoint] != "ep1" || run.Tags[serving.TagBatchDeployment] != "rows":
		t.Errorf("tags %v", run.Tags)
	}
	run2, err := f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Deployment: "summary", Input: job.Input{Type: job.URIFolder, Manifest: data}})
	if err != nil {
		t.Fatal(err)
	}
	if p := run2.Spec.Parallel; p.AppendRowTo != "" || strings.Contains(run2.Spec.Command, "append-row-to") || p.BIOutput != "score" {
		t.Errorf("summary_only: command %q, settings %+v; want no row file and AZUREML_BI_OUTPUT_PATH on score", run2.Spec.Command, p)
	}
}

func TestBatchRefusals(t *testing.T) {
	f, d := batchFixture(t)
	ctx := t.Context()
	if _, err := f.s.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	data := putTree(t, f, map[string]string{"a.txt": "1"})
	_, err := f.s.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "ep1"}, true)
	wantKind(t, err, controller.Conflict, "batch endpoint ep1 already exists")
	_, err = f.s.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "ep2", AuthMode: "key"}, true)
	wantKind(t, err, controller.Invalid, "auth_mode")
	_, err = f.s.PutBatchDeployment(ctx, d, true, false)
	wantKind(t, err, controller.Conflict, "already exists")
	noModel := d
	noModel.Name, noModel.Model = "other", serving.ModelRef{Ref: "ghost:1"}
	_, err = f.s.PutBatchDeployment(ctx, noModel, true, false)
	wantKind(t, err, controller.NotFound, "ghost")
	noCompute := d
	noCompute.Name, noCompute.Compute = "other", ""
	_, err = f.s.PutBatchDeployment(ctx, noCompute, true, false)
	wantKind(t, err, controller.Invalid, "compute: required")
	dotted := d
	dotted.Name = "v.2"
	_, err = f.s.PutBatchDeployment(ctx, dotted, true, false)
	wantKind(t, err, controller.Invalid, `name: "v.2" must be 1 to 32 letters, digits, '_' and '-'`)
	underscored := d
	underscored.Name = "regular_deployment" // Azure's rule takes '_'
	if _, err := f.s.PutBatchDeployment(ctx, underscored, true, false); err != nil {
		t.Errorf("a batch deployment named regular_deployment: %v", err)
	}
	orphan := d
	orphan.Endpoint = "nope"
	_, err = f.s.PutBatchDeployment(ctx, orphan, true, false)
	wantKind(t, err, controller.NotFound, "no batch endpoint nope")

	_, err = f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Deployment: "ghost", Input: job.Input{Type: job.URIFolder, Manifest: data}})
	wantKind(t, err, controller.NotFound, "has no deployment ghost")
	_, err = f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Input: job.Input{Type: "mltable", Manifest: data}})
	wantKind(t, err, controller.Invalid, "uri_folder or uri_file")
	_, err = f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Input: job.Input{Type: job.URIFolder, Path: "/home/me/data"}})
	wantKind(t, err, controller.Invalid, "is a path on the client")
	_, err = f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Input: job.Input{Type: job.URIFolder, Manifest: notUploaded}})
	wantKind(t, err, controller.Invalid, "was not uploaded")

	err = f.s.DeleteBatchDeployment(ctx, "ep1", "rows")
	wantKind(t, err, controller.Conflict, "default")
	if err := f.s.DeleteBatchEndpoint(ctx, "ep1"); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.BatchDeployment(ctx, "ep1", "rows")
	wantKind(t, err, controller.NotFound, "has no deployment rows")
}

// TestUpdateBatchDeploymentAndDefault: an update replaces the settings the next invoke uses;
// --set-default moves the default; updating what does not exist is NotFound.
func TestUpdateBatchDeploymentAndDefault(t *testing.T) {
	f, d := batchFixture(t)
	ctx := t.Context()
	if _, err := f.s.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	second := d
	second.Name = "second"
	if _, err := f.s.PutBatchDeployment(ctx, second, true, true); err != nil {
		t.Fatal(err)
	}
	d.Settings.MiniBatchSize, d.Settings.OutputFileName = 3, "out.csv"
	if _, err := f.s.PutBatchDeployment(ctx, d, false, false); err != nil {
		t.Fatal(err)
	}
	data := putTree(t, f, map[string]string{"a.txt": "1"})
	run, err := f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Deployment: "rows", Input: job.Input{Manifest: data}})
	if err != nil {
		t.Fatal(err)
	}
	if p := run.Spec.Parallel; p.MiniBatchSize != 3 || p.OutputFileName != "out.csv" {
		t.Errorf("after the update the job has %+v", p)
	}
	def, err := f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Input: job.Input{Manifest: data}})
	if err != nil || def.Tags[serving.TagBatchDeployment] != "second" {
		t.Errorf("default after --set-default: %v, %v", def.Tags, err)
	}
	ghost := d
	ghost.Name = "ghost"
	_, err = f.s.PutBatchDeployment(ctx, ghost, false, false)
	wantKind(t, err, controller.NotFound, "has no deployment ghost")
	_, err = f.s.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "nope"}, false)
	wantKind(t, err, controller.NotFound, "no batch endpoint nope")
	if e, err := f.s.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "ep1", Meta: asset.Meta{Description: "new"}}, false); err != nil ||
		e.Spec.DefaultDeployment != "second" || e.Spec.Description != "new" {
		t.Errorf("update without defaults: %+v, %v; want the default kept", e, err)
	}
	_, err = f.s.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "ep1", DefaultDeployment: "ghost"}, false)
	wantKind(t, err, controller.Invalid, "defaults.deployment_name")
}

// TestInvokeBatchOverrides: an invoke's overrides shape its job alone (the stored deployment
// keeps its settings, and the next invoke without them runs it as stored); the output path is
// recorded as written by the job, so a read of it names the job until it has finished.
func TestInvokeBatchOverrides(t *testing.T) {
	f, d := batchFixture(t)
	ctx := t.Context()
	if _, err := f.s.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	data := putTree(t, f, map[string]string{"a.txt": "1"})
	size, retries := 20, 0
	inv := serving.BatchInvocation{BatchOverrides: serving.BatchOverrides{MiniBatchSize: &size, MaxRetries: &retries,
		OutputFileName: "p.csv", OutputPath: "azureml://datastores/workspaceblobstore/paths/ep1/today", JobName: "score-today"}}
	run, err := f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Input: job.Input{Manifest: data}, BatchInvocation: inv})
	if err != nil {
		t.Fatal(err)
	}
	if p := run.Spec.Parallel; run.ID != "score-today" || p.MiniBatchSize != 20 || p.MaxRetries != 0 || p.OutputFileName != "p.csv" {
		t.Errorf("run %s with settings %+v; want score-today with the overrides", run.ID, p)
	}
	// A job reading the output path before the job finished is told which job writes it.
	_, err = f.ctrl.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "cat ${{inputs.p}}", Compute: "local",
		Inputs: map[string]job.Input{"p": {Type: job.URIFile, Path: "azureml://datastores/workspaceblobstore/paths/ep1/today/p.csv"}}}})
	if err == nil || !strings.Contains(err.Error(), "written by job score-today (output score)") {
		t.Errorf("reading the output path before the job finished: %v; want it to name the job", err)
	}
	stored, err := f.s.BatchDeployment(ctx, "ep1", "rows")
	if err != nil || !reflect.DeepEqual(stored.Spec.Settings, d.Settings) {
		t.Errorf("stored settings %+v (%v), want them unchanged: %+v", stored.Spec.Settings, err, d.Settings)
	}
	again, err := f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Input: job.Input{Manifest: data}})
	if err != nil {
		t.Fatal(err)
	}
	if p := again.Spec.Parallel; p.MiniBatchSize != d.Settings.MiniBatchSize || p.OutputFileName != "predictions.csv" || again.Spec.Outputs["score"].Path != "" {
		t.Errorf("the next invoke runs %+v, output %+v; want the deployment as stored", p, again.Spec.Outputs["score"])
	}
}

func TestInvokeBatchOverrideRefusals(t *testing.T) {
	f, d := batchFixture(t)
	ctx := t.Context()
	if _, err := f.s.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ctrl.Workspace.Datastores.Create(ctx, datastore.Datastore{Name: "shared", Type: datastore.TypeLocalFolder, Path: t.TempDir()}, nil); err != nil {
		t.Fatal(err)
	}
	data := putTree(t, f, map[string]string{"a.txt": "1"})
	zero, two := 0, 2
	for _, tc := range []struct {
		name string
		inv  serving.BatchInvocation
		want string
	}{
		{"mini-batch size", serving.BatchInvocation{BatchOverrides: serving.BatchOverrides{MiniBatchSize: &zero}},
			"mini_batch_size (--mini-batch-size): expected an integer of at least 1, got 0"},
		{"more nodes than the target has", serving.BatchInvocation{BatchOverrides: serving.BatchOverrides{InstanceCount: &two}},
			"resources.instance_count: the local target has one node, the job asks for 2"},
		{"unknown datastore", serving.BatchInvocation{BatchOverrides: serving.BatchOverrides{OutputPath: "azureml://datastores/blobs/paths/x"}},
			"output_path (--output-path): no datastore named blobs in this workspace (known: workspaceblobstore, shared)"},
		{"local_folder datastore", serving.BatchInvocation{Outputs: map[string]job.Output{"score": {Path: "azureml://datastores/shared/paths/x"}}},
			"outputs.score.path: datastore shared is a local_folder datastore, which jobs read in place; job outputs are written in workspaceblobstore"},
		{"no path", serving.BatchInvocation{BatchOverrides: serving.BatchOverrides{OutputPath: "azureml://datastores/workspaceblobstore/paths/"}},
			"names no path inside datastore workspaceblobstore"},
		{"not a datastore path", serving.BatchInvocation{BatchOverrides: serving.BatchOverrides{OutputPath: "/tmp/out"}},
			"output_path (--output-path): /tmp/out: expected azureml://datastores/<datastore>/paths/<path>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Input: job.Input{Manifest: data}, BatchInvocation: tc.inv})
			wantKind(t, err, controller.Invalid, tc.want)
		})
	}
}

// TestBatchMLflowNoCode: a registered mlflow_model deploys without code_configuration, and its
// jobs run Hangar's built-in MLflow batch scorer (no entry script of their own); a custom model
// without a script and a summary_only no-code deployment are refused.
func TestBatchMLflowNoCode(t *testing.T) {
	f, d := batchFixture(t)
	ctx := t.Context()
	h := putTree(t, f, map[string]string{"MLmodel": "flavors: {}\n", "model.pkl": "x"})
	createModel(t, f, model.Spec{Name: "heart", Path: "/client/model", Type: model.MLflowModel}, h)
	nc := d
	nc.Name, nc.Model, nc.CodeSnapshot, nc.ScoringScript = "ncd", serving.ModelRef{Ref: "heart:1"}, "", ""
	if _, err := f.s.PutBatchDeployment(ctx, nc, true, false); err != nil {
		t.Fatal(err)
	}
	data := putTree(t, f, map[string]string{"a.csv": "x\n1\n"})
	run, err := f.s.InvokeBatch(ctx, "ep1", "admin", api.BatchInvokeRequest{Deployment: "ncd", Input: job.Input{Type: job.URIFolder, Manifest: data}})
	if err != nil {
		t.Fatal(err)
	}
	if p := run.Spec.Parallel; !p.MLflow || p.EntryScript != "" || p.ModelInput != "model" || p.AppendRowTo != "score" ||
		p.OutputFileName != "predictions.csv" || run.Spec.CodeSnapshot != "" {
		t.Errorf("the no-code job: settings %+v, code %q; want the built-in scorer over the model, rows to score/predictions.csv", p, run.Spec.CodeSnapshot)
	}
	custom := nc
	custom.Name, custom.Model = "custom", serving.ModelRef{Ref: "m:1"}
	_, err = f.s.PutBatchDeployment(ctx, custom, true, false)
	wantKind(t, err, controller.Invalid, "code_configuration.scoring_script: required")
	summary := nc
	summary.Name, summary.Settings.OutputAction = "summary", serving.OutputSummaryOnly
	_, err = f.s.PutBatchDeployment(ctx, summary, true, false)
	wantKind(t, err, controller.Invalid, "settings.output_action: summary_only")
}
