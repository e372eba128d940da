package controller

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/secrets"
)

// objectStoreFixture is a fixture whose workspace seals, with an S3 datastore s3ds on bucket
// data (keys) and an Azure one blob on Azurite's account (no credentials).
func objectStoreFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	box, err := secrets.OpenBox(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	f.c.Workspace.Sealer = box
	ctx := t.Context()
	if _, err := f.c.Workspace.Datastores.Create(ctx, datastore.Datastore{Name: "s3ds", Type: datastore.TypeS3, Bucket: "data",
		EndpointURL: "http://127.0.0.1:7070", Region: "us-east-1"}, &datastore.Credentials{AccessKeyID: "AKID", SecretAccessKey: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Workspace.Datastores.Create(ctx, datastore.Datastore{Name: "blob", Type: datastore.TypeAzureBlob, AccountName: "devstoreaccount1",
		ContainerName: "data", Endpoint: "http://127.0.0.1:10000/devstoreaccount1"}, nil); err != nil {
		t.Fatal(err)
	}
	return f
}

// A data asset on an object store is registered where it is: no manifest, nothing uploaded, its
// Location (the datastore's, or for a direct URI the datastore on its bucket, else none).
func TestDataAssetOnObjectStore(t *testing.T) {
	f := objectStoreFixture(t)
	for _, tt := range []struct {
		name, typ, path string
		want            datastore.Location
	}{
		{"datastore path", "uri_folder", "azureml://datastores/s3ds/paths/images/",
			datastore.Location{Datastore: "s3ds", Type: datastore.TypeS3, Container: "data", Endpoint: "http://127.0.0.1:7070", Region: "us-east-1", Path: "images"}},
		{"azure datastore file", "uri_file", "azureml://datastores/blob/paths/iris/iris.csv",
			datastore.Location{Datastore: "blob", Type: datastore.TypeAzureBlob, Account: "devstoreaccount1", Container: "data",
				Endpoint: "http://127.0.0.1:10000/devstoreaccount1", Path: "iris/iris.csv"}},
		{"direct URI in a datastore's bucket", "uri_folder", "s3://data/more",
			datastore.Location{Datastore: "s3ds", Type: datastore.TypeS3, Container: "data", Endpoint: "http://127.0.0.1:7070", Region: "us-east-1", Path: "more"}},
		{"direct URI no datastore holds", "mltable", "gs://elsewhere/table/",
			datastore.Location{Type: datastore.TypeGCS, Container: "elsewhere", Path: "table"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := createData(t, f, dataset.Spec{Name: "d", Type: tt.typ, Path: tt.path}, "")
			if v.Manifest != "" || v.Files != 0 || v.Location == nil || *v.Location != tt.want || v.Source != tt.path {
				t.Errorf("version = %+v (location %+v), want location %+v", v, v.Location, tt.want)
			}
			got, err := f.c.Workspace.Data.Resolve(t.Context(), v.ID())
			if err != nil || got.Location == nil || *got.Location != tt.want {
				t.Errorf("stored version = %+v, %v", got, err)
			}
		})
	}
	for path, msg := range map[string]string{
		"azureml://datastores/s3ds/paths/":                              "type uri_file names one object; s3://data/ is the whole container",
		"wasbs://data@devstoreaccount1.blob.core.windows.net":           "type uri_file names one object",
		"https://acct1.blob.core.windows.net/data/x?sv=1&sig=SECRETSIG": "https://acct1.blob.core.windows.net/data/x?…",
	} {
		v, err := f.c.Workspace.Data.Create(t.Context(), api.CreateDataRequest{Spec: dataset.Spec{Name: "d", Type: "uri_file", Path: path}})
		if err == nil {
			t.Fatalf("data create %s = %+v, want an error with %q", path, v, msg)
		}
		wantKind(t, err, Invalid, msg)
		if strings.Contains(err.Error(), "SECRETSIG") {
			t.Errorf("the refusal repeats a SAS token: %v", err)
		}
	}
}

// A job input naming a data asset on an object store gets the place as the datastore has it now
// (its Store), and its run gets that datastore's credentials; a direct URI no datastore holds is
// read with the node's identity.
func TestJobInputNamesObjectStoreAsset(t *testing.T) {
	f := objectStoreFixture(t)
	ctx := t.Context()
	createData(t, f, dataset.Spec{Name: "images", Path: "azureml://datastores/s3ds/paths/images/"}, "")
	createData(t, f, dataset.Spec{Name: "elsewhere", Type: "uri_folder", Path: "gs://elsewhere/table/"}, "")
	r := f.create(t, job.Spec{Command: "ls", Inputs: map[string]job.Input{
		"a": {Type: job.URIFolder, Path: "azureml:images:1"},
		"b": {Type: job.URIFolder, Path: "azureml:elsewhere@latest", Mode: "download"},
	}})
	in := f.run(t, r.ID).Spec.Inputs
	wantA := datastore.Location{Datastore: "s3ds", Type: datastore.TypeS3, Container: "data", Endpoint: "http://127.0.0.1:7070", Region: "us-east-1", Path: "images"}
	if in["a"].Store == nil || *in["a"].Store != wantA || in["a"].Manifest != "" {
		t.Errorf("input a = %+v (store %v), want store %v", in["a"], in["a"].Store, wantA)
	}
	wantB := datastore.Location{Type: datastore.TypeGCS, Container: "elsewhere", Path: "table"}
	if in["b"].Store == nil || *in["b"].Store != wantB {
		t.Errorf("input b = %+v (store %v), want store %v", in["b"], in["b"].Store, wantB)
	}
	creds, err := f.c.Workspace.Datastores.CredentialsForRun(ctx, r.ID)
	if err != nil || len(creds) != 1 || creds["s3ds"].AccessKeyID != "AKID" {
		t.Errorf("the run's credentials = %v, %v; want s3ds's", creds, err)
	}
}
