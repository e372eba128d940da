package controller

import (
	"strings"
	"testing"

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
	if _, err := f.c.PutBatchEndpoint(t.Context(), serving.BatchEndpoint{Name: "ep1"}, true); err != nil {
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
	if _, err := f.c.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	summary := d
	summary.Name, summary.Settings.OutputAction = "summary", serving.OutputSummaryOnly
	if _, err := f.c.PutBatchDeployment(ctx, summary, true, false); err != nil {
		t.Fatal(err)
	}
	e, err := f.c.BatchEndpoint(ctx, "ep1")
	if err != nil || e.Spec.DefaultDeployment != "rows" || e.Spec.AuthMode != serving.AuthAADToken {
		t.Fatalf("endpoint %+v, %v: want the first deployment as default and aad_token", e, err)
	}
	data := putTree(t, f, map[string]string{"a.txt": "1", "b.txt": "2"})
	run, err := f.c.InvokeBatch(ctx, "ep1", "", "admin", job.Input{Type: job.URIFolder, Manifest: data})
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
	run2, err := f.c.InvokeBatch(ctx, "ep1", "summary", "admin", job.Input{Type: job.URIFolder, Manifest: data})
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
	if _, err := f.c.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	data := putTree(t, f, map[string]string{"a.txt": "1"})
	_, err := f.c.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "ep1"}, true)
	wantKind(t, err, Conflict, "batch endpoint ep1 already exists")
	_, err = f.c.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "ep2", AuthMode: "key"}, true)
	wantKind(t, err, Invalid, "auth_mode")
	_, err = f.c.PutBatchDeployment(ctx, d, true, false)
	wantKind(t, err, Conflict, "already exists")
	noModel := d
	noModel.Name, noModel.Model = "other", serving.ModelRef{Ref: "ghost:1"}
	_, err = f.c.PutBatchDeployment(ctx, noModel, true, false)
	wantKind(t, err, NotFound, "ghost")
	noCompute := d
	noCompute.Name, noCompute.Compute = "other", ""
	_, err = f.c.PutBatchDeployment(ctx, noCompute, true, false)
	wantKind(t, err, Invalid, "compute: required")
	dotted := d
	dotted.Name = "v.2"
	_, err = f.c.PutBatchDeployment(ctx, dotted, true, false)
	wantKind(t, err, Invalid, `name: "v.2" must be 1 to 32 letters, digits, '_' and '-'`)
	underscored := d
	underscored.Name = "regular_deployment" // Azure's rule takes '_'
	if _, err := f.c.PutBatchDeployment(ctx, underscored, true, false); err != nil {
		t.Errorf("a batch deployment named regular_deployment: %v", err)
	}
	orphan := d
	orphan.Endpoint = "nope"
	_, err = f.c.PutBatchDeployment(ctx, orphan, true, false)
	wantKind(t, err, NotFound, "no batch endpoint nope")

	_, err = f.c.InvokeBatch(ctx, "ep1", "ghost", "admin", job.Input{Type: job.URIFolder, Manifest: data})
	wantKind(t, err, NotFound, "has no deployment ghost")
	_, err = f.c.InvokeBatch(ctx, "ep1", "", "admin", job.Input{Type: "mltable", Manifest: data})
	wantKind(t, err, Invalid, "uri_folder or uri_file")
	_, err = f.c.InvokeBatch(ctx, "ep1", "", "admin", job.Input{Type: job.URIFolder, Path: "/home/me/data"})
	wantKind(t, err, Invalid, "is a path on the client")
	_, err = f.c.InvokeBatch(ctx, "ep1", "", "admin", job.Input{Type: job.URIFolder, Manifest: notUploaded})
	wantKind(t, err, Invalid, "was not uploaded")

	err = f.c.DeleteBatchDeployment(ctx, "ep1", "rows")
	wantKind(t, err, Conflict, "default")
	if err := f.c.DeleteBatchEndpoint(ctx, "ep1"); err != nil {
		t.Fatal(err)
	}
	_, err = f.c.BatchDeployment(ctx, "ep1", "rows")
	wantKind(t, err, NotFound, "has no deployment rows")
}

// TestUpdateBatchDeploymentAndDefault: an update replaces the settings the next invoke uses;
// --set-default moves the default; updating what does not exist is NotFound.
func TestUpdateBatchDeploymentAndDefault(t *testing.T) {
	f, d := batchFixture(t)
	ctx := t.Context()
	if _, err := f.c.PutBatchDeployment(ctx, d, true, false); err != nil {
		t.Fatal(err)
	}
	second := d
	second.Name = "second"
	if _, err := f.c.PutBatchDeployment(ctx, second, true, true); err != nil {
		t.Fatal(err)
	}
	d.Settings.MiniBatchSize, d.Settings.OutputFileName = 3, "out.csv"
	if _, err := f.c.PutBatchDeployment(ctx, d, false, false); err != nil {
		t.Fatal(err)
	}
	data := putTree(t, f, map[string]string{"a.txt": "1"})
	run, err := f.c.InvokeBatch(ctx, "ep1", "rows", "admin", job.Input{Manifest: data})
	if err != nil {
		t.Fatal(err)
	}
	if p := run.Spec.Parallel; p.MiniBatchSize != 3 || p.OutputFileName != "out.csv" {
		t.Errorf("after the update the job has %+v", p)
	}
	def, err := f.c.InvokeBatch(ctx, "ep1", "", "admin", job.Input{Manifest: data})
	if err != nil || def.Tags[serving.TagBatchDeployment] != "second" {
		t.Errorf("default after --set-default: %v, %v", def.Tags, err)
	}
	ghost := d
	ghost.Name = "ghost"
	_, err = f.c.PutBatchDeployment(ctx, ghost, false, false)
	wantKind(t, err, NotFound, "has no deployment ghost")
	_, err = f.c.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "nope"}, false)
	wantKind(t, err, NotFound, "no batch endpoint nope")
	if e, err := f.c.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "ep1", Description: "new"}, false); err != nil ||
		e.Spec.DefaultDeployment != "second" || e.Spec.Description != "new" {
		t.Errorf("update without defaults: %+v, %v; want the default kept", e, err)
	}
	_, err = f.c.PutBatchEndpoint(ctx, serving.BatchEndpoint{Name: "ep1", DefaultDeployment: "ghost"}, false)
	wantKind(t, err, Invalid, "defaults.deployment_name")
}
