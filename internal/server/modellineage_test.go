package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
)

// A model version's lineage as `model show` and the studio read it: version 1, registered from
// a run's logged files, names that run with its code snapshot, registered environment and data
// inputs (not its literal ones), the alias naming it and the deployments serving it, whichever
// way they name it (its version; @latest when it was the latest; an alias); version 2, uploaded,
// has no run and the deployment that took it as @latest.
func TestModelLineage(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	empty, err := ts.blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.admin.Environments.Create(ctx, job.Environment{Name: "team", Image: "python:3.12"}); err != nil {
		t.Fatal(err)
	}
	sp := job.Spec{Name: "trainer", DisplayName: "train iris", ExperimentName: "iris", Command: "python train.py", CodeSnapshot: empty,
		Environment: job.Environment{Ref: "team:1"},
		Inputs: map[string]job.Input{
			"train": {Type: job.URIFolder, Path: "/client/data/train", Manifest: empty},
			"lr":    {Type: job.InputNumber, Value: "0.1"},
		}}
	if _, err := ts.admin.Jobs.Create(ctx, api.CreateJobRequest{Spec: sp}); err != nil {
		t.Fatal(err)
	}
	tok := ts.ctrl.RunToken("trainer")
	if r := ts.mlflowDo(t, tok, http.MethodPut, "/api/2.0/mlflow-artifacts/artifacts/0/trainer/artifacts/model/MLmodel", strings.NewReader("flavors: {}")); r.status != 200 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	v1, err := ts.admin.Models.Create(ctx, api.CreateModelRequest{Spec: model.Spec{Name: "m",
		Path: "azureml://jobs/trainer/outputs/artifacts/paths/model"}})
	if err != nil {
		t.Fatal(err)
	}
	createModels(t, ts, model.Spec{Name: "m"}, model.Spec{Name: "other"})
	if err := ts.store.Assets.SetModelAlias(ctx, store.ModelAlias{Name: "m", Alias: "champion", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	putDeployments(t, ts, v1.Manifest)

	got, err := ts.admin.ModelLineage.Get(ctx, "m", "1")
	if err != nil {
		t.Fatal(err)
	}
	want := &api.ModelLineage{Name: "m", Version: "1", Source: "azureml://jobs/trainer/outputs/artifacts/paths/model",
		Aliases: []string{"champion"},
		Run: &api.LineageRun{Name: "trainer", Output: "artifacts/paths/model", DisplayName: "train iris", ExperimentName: "iris", Status: job.Queued, CodeSnapshot: empty,
			Environment: api.LineageEnvironment{Name: "team", Version: "1", Ref: "team:1", Image: "python:3.12"},
			Inputs:      []api.LineageInput{{Name: "train", Type: job.URIFolder, Path: "/client/data/train", Manifest: empty}}},
		Deployments: []api.ModelDeployment{
			{Kind: "online", Endpoint: "ep", Deployment: "blue", Ref: "m:1", Version: "1", State: "Succeeded"},
			{Kind: "online", Endpoint: "ep", Deployment: "canary", Ref: "m@champion", Version: "1"},
			{Kind: "batch", Endpoint: "nightly-ep", Deployment: "nightly", Ref: "m@latest", Version: "1"},
		}}
	if got.Run != nil {
		got.Run.Status = job.Queued // whether the fake backend started it yet is not the point
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lineage of m:1 (-want +got):\n%s", diff)
	}

	got, err = ts.admin.ModelLineage.Get(ctx, "m", "latest")
	if err != nil {
		t.Fatal(err)
	}
	want = &api.ModelLineage{Name: "m", Version: "2", Source: model.SourceLocal, Aliases: []string{},
		Deployments: []api.ModelDeployment{{Kind: "online", Endpoint: "ep", Deployment: "green", Ref: "m@latest", Version: "2"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lineage of m@latest (-want +got):\n%s", diff)
	}

	if err := ts.store.Assets.SetRegisteredModelDescription(ctx, "m", "<b>flowers</b>", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Assets.SetRegisteredModelTag(ctx, store.RegisteredModelTag{Name: "m", Key: "owner", Value: "vision"}); err != nil {
		t.Fatal(err)
	}
	all, err := ts.admin.ModelLineage.Model(ctx, "m")
	if err != nil || all.Name != "m" || all.Description != "<b>flowers</b>" || all.Tags["owner"] != "vision" ||
		len(all.Versions) != 2 || all.Versions[0].Version != "2" || all.Versions[1].Version != "1" {
		t.Fatalf("the model's lineage = %+v, %v", all, err)
	}
	one, _ := ts.admin.ModelLineage.Get(ctx, "m", "1")
	if diff := cmp.Diff(one, &all.Versions[1]); diff != "" {
		t.Errorf("m:1 in the model's lineage differs from its own (-own +in list):\n%s", diff)
	}
	for _, tt := range []struct {
		name string
		want int
	}{{"ghost", http.StatusNotFound}, {"-bad", http.StatusBadRequest}} {
		_, err = ts.admin.ModelLineage.Model(ctx, tt.name)
		if st, _ := apiStatus(t, err); st != tt.want {
			t.Errorf("lineage of model %s: %v; want %d", tt.name, err, tt.want)
		}
	}

	// From the run's side: the versions registered from its outputs.
	from, err := ts.admin.ModelLineage.FromRun(ctx, "trainer")
	if err != nil || len(from) != 1 || from[0].Name != "m" || from[0].Version != "1" {
		t.Errorf("models from trainer = %+v, %v", from, err)
	}
	ts.createJob(t, "trainer2") // registered nothing (and trainer, a prefix of its name, is not its)
	if from, err := ts.admin.ModelLineage.FromRun(ctx, "trainer2"); err != nil || len(from) != 0 {
		t.Errorf("models from trainer2 = %+v, %v", from, err)
	}
	_, err = ts.admin.ModelLineage.FromRun(ctx, "ghost")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("models of a job that is not there: %v", err)
	}

	_, err = ts.admin.ModelLineage.Get(ctx, "m", "9")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("lineage of a version that is not there: %v", err)
	}
}

// putDeployments stores deployments of m as the controller leaves them: blue names version 1
// and green @latest (both with the version they resolved to), canary follows the alias
// champion and the batch deployment took v1's files as @latest, neither recording a version;
// o serves another model.
func putDeployments(t *testing.T, ts *testServer, v1Manifest string) {
	t.Helper()
	ctx, now := t.Context(), time.Now().UTC()
	if err := ts.store.Serving.PutEndpoint(ctx, store.EndpointRecord{Spec: serving.Endpoint{Name: "ep", AuthMode: serving.AuthKey},
		CreatedAt: now, UpdatedAt: now}, true); err != nil {
		t.Fatal(err)
	}
	for _, d := range []store.DeploymentRecord{
		{Spec: serving.Deployment{Name: "blue", Endpoint: "ep", Model: serving.ModelRef{Ref: "m:1", Name: "m", Version: "1"}}, State: "Succeeded"},
		{Spec: serving.Deployment{Name: "green", Endpoint: "ep", Model: serving.ModelRef{Ref: "m@latest", Name: "m", Version: "2"}}},
		{Spec: serving.Deployment{Name: "canary", Endpoint: "ep", Model: serving.ModelRef{Ref: "m@champion"}}},
		{Spec: serving.Deployment{Name: "o", Endpoint: "ep", Model: serving.ModelRef{Ref: "other:1", Name: "other", Version: "1"}}},
	} {
		d.CreatedAt, d.UpdatedAt = now, now
		if _, err := ts.store.Serving.PutDeployment(ctx, d, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.store.Serving.PutBatchEndpoint(ctx, store.BatchEndpointRecord{Spec: serving.BatchEndpoint{Name: "nightly-ep"},
		CreatedAt: now, UpdatedAt: now}, true); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Serving.PutBatchDeployment(ctx, store.BatchDeploymentRecord{Spec: serving.BatchDeployment{Name: "nightly",
		Endpoint: "nightly-ep", Model: serving.ModelRef{Ref: "m@latest", Manifest: v1Manifest}}, CreatedAt: now, UpdatedAt: now}, true); err != nil {
		t.Fatal(err)
	}
}
