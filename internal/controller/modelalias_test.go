package controller

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
)

// name@<alias> resolves to the version the alias names now, wherever a model reference
// resolves: Models.Resolve, and a job's model input (also a uri_folder one, which otherwise
// looks for a data asset first). A missing alias names the field and the aliases there are.
func TestModelAliasReferences(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	h1 := putTree(t, f, map[string]string{"w": "one"})
	h2 := putTree(t, f, map[string]string{"w": "two!"})
	createModel(t, f, model.Spec{Name: "clf", Path: "/x"}, h1)
	createModel(t, f, model.Spec{Name: "clf", Path: "/x"}, h2)
	models := f.c.Workspace.Models
	if _, err := models.SetAlias(ctx, "clf", "champion", "1"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"clf@champion", "azureml:clf@champion"} {
		if v, err := models.Resolve(ctx, ref); err != nil || v.Version != "1" {
			t.Errorf("Resolve(%q) = %+v, %v; want version 1", ref, v, err)
		}
	}
	if v, err := models.Resolve(ctx, "clf@latest"); err != nil || v.Version != "2" {
		t.Errorf("@latest keeps Azure's meaning (newest): %+v, %v", v, err)
	}
	if _, err := models.SetAlias(ctx, "clf", "champion", "2"); err != nil { // moves it
		t.Fatal(err)
	}
	for _, typ := range []string{job.MLflowModel, job.CustomModel, job.URIFolder} {
		r := f.create(t, job.Spec{Inputs: map[string]job.Input{"model": {Type: typ, Path: "azureml:clf@champion", Mode: "ro_mount"}}})
		if got := f.run(t, r.ID).Spec.Inputs["model"]; got.Manifest != h2 {
			t.Errorf("%s input azureml:clf@champion resolved to %+v, want version 2's files", typ, got)
		}
	}

	_, err := models.Resolve(ctx, "clf@challenger")
	wantKind(t, err, NotFound, "model clf has no alias challenger (its aliases: champion → 2; or set it with hangar model alias set clf challenger <version>)")
	for _, tt := range []struct {
		in  job.Input
		msg string
	}{
		{job.Input{Type: job.MLflowModel, Path: "azureml:clf@challenger"}, "inputs.model.path: model clf has no alias challenger"},
		{job.Input{Type: job.URIFolder, Path: "azureml:clf@challenger"}, "inputs.model.path: model clf has no alias challenger"},
		{job.Input{Type: job.MLTable, Path: "azureml:clf@champion"}, "inputs.model.path: a mltable input cannot name a model"},
		{job.Input{Type: job.CustomModel, Path: "azureml:clf@v2"}, "v<number> is reserved"},
	} {
		_, err := f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x", Inputs: map[string]job.Input{"model": tt.in}}})
		wantKind(t, err, Invalid, tt.msg)
	}

	_, err = models.SetAlias(ctx, "clf", "champion", "9")
	wantKind(t, err, NotFound, "no model clf:9")
	_, err = models.SetAlias(ctx, "clf", "Latest", "1")
	wantKind(t, err, Invalid, "reserved")
	wantKind(t, models.DeleteAlias(ctx, "clf", "challenger"), NotFound, "model clf has no alias challenger")
	if err := models.DeleteAlias(ctx, "clf", "champion"); err != nil {
		t.Fatal(err)
	}
	_, err = models.Resolve(ctx, "clf@champion")
	wantKind(t, err, NotFound, "model clf has no alias champion (set it with hangar model alias set clf champion <version>)")
}
