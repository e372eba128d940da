package controller

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
)

// objectStores puts object-store datastores in f's workspace as dstores' create would (straight
// into the store: what is tested here is how jobs name them).
func objectStores(t *testing.T, f *fixture, ds ...datastore.Datastore) {
	t.Helper()
	for _, d := range ds {
		if err := f.c.Store.Assets.PutDatastore(t.Context(), d, ""); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	lakeDS  = datastore.Datastore{Name: "lake", Type: datastore.TypeS3, Bucket: "bk1", EndpointURL: "http://127.0.0.1:9000", Region: "eu-west-1"}
	blobDS  = datastore.Datastore{Name: "ab", Type: datastore.TypeAzureBlob, AccountName: "acct1", ContainerName: "data", Endpoint: "http://127.0.0.1:10000/acct1"}
	gcsDS   = datastore.Datastore{Name: "g", Type: datastore.TypeGCS, Bucket: "gbk", EndpointURL: "http://127.0.0.1:4443"}
	lakeLoc = func(p string) *datastore.Location {
		return &datastore.Location{Datastore: "lake", Type: datastore.TypeS3, Container: "bk1", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", Path: p}
	}
)

// Inputs and outputs in object stores get the location the node reads or writes: a datastore's
// path its datastore's; a direct URI that of the datastore on its container or bucket, or none
// (the node's own identity); direct mode the URI itself; a location that came with the spec is
// derived again.
func TestObjectStoreDataResolved(t *testing.T) {
	f := newFixture(t)
	objectStores(t, f, lakeDS, blobDS, gcsDS)
	forged := &datastore.Location{Datastore: "lake", Type: datastore.TypeS3, Container: "bk1", Endpoint: "http://evil.example"}
	r := f.create(t, job.Spec{
		Inputs: map[string]job.Input{
			"ds":      {Type: job.URIFolder, Path: "azureml://datastores/lake/paths/train/"},
			"file":    {Type: job.URIFile, Mode: "download", Path: "s3://bk1/x.csv"},
			"ambient": {Type: job.URIFolder, Path: "s3://other-bucket/y/", Store: forged},
			"direct":  {Type: job.URIFolder, Mode: "direct", Path: "wasbs://data@acct1.blob.core.windows.net/raw"},
			"dsdir":   {Type: job.URIFolder, Mode: "direct", Path: "azureml://datastores/lake/paths/z"},
			"blob":    {Type: job.URIFolder, Path: "https://acct1.blob.core.windows.net/data/raw%20data"},
			"web":     {Type: job.URIFile, Path: "https://example.com/a.csv"},
		},
		Outputs: map[string]job.Output{
			"model": {Type: job.URIFolder, Path: "azureml://datastores/lake/paths/runs/${{name}}/${{ output_name }}/"},
			"preds": {Type: job.URIFolder, Mode: "upload", Path: "gs://gbk/preds/${{ name }}"},
			"keep":  {Type: job.URIFolder, Path: "azureml://datastores/workspaceblobstore/paths/kept/"},
		},
	})
	got := f.run(t, r.ID).Spec
	wantIn := map[string]*datastore.Location{
		"ds":      lakeLoc("train"),
		"file":    lakeLoc("x.csv"),
		"ambient": {Type: datastore.TypeS3, Container: "other-bucket", Path: "y"},
		"blob": {Datastore: "ab", Type: datastore.TypeAzureBlob, Account: "acct1", Container: "data",
			Endpoint: "http://127.0.0.1:10000/acct1", Path: "raw data"},
	}
	for name, in := range got.Inputs {
		if diff := cmp.Diff(wantIn[name], in.Store); diff != "" {
			t.Errorf("inputs.%s.store (-want +got):\n%s", name, diff)
		}
	}
	if p := got.Inputs["direct"].Path; p != "wasbs://data@acct1.blob.core.windows.net/raw" {
		t.Errorf("a direct URI in direct mode is passed as it is; got %s", p)
	}
	if p := got.Inputs["dsdir"].Path; p != "s3://bk1/z" {
		t.Errorf("a datastore path in direct mode is passed as its store's URI; got %s", p)
	}
	wantOut := map[string]*datastore.Location{
		"model": lakeLoc("runs/${{name}}/model"),
		"preds": {Datastore: "g", Type: datastore.TypeGCS, Container: "gbk", Endpoint: "http://127.0.0.1:4443", Path: "preds/${{name}}"},
	}
	for name, o := range got.Outputs {
		if diff := cmp.Diff(wantOut[name], o.Store); diff != "" {
			t.Errorf("outputs.%s.store (-want +got):\n%s", name, diff)
		}
	}
	if u := got.Outputs["model"].Store.ForRun(r.ID).URI(); u != "s3://bk1/runs/"+r.ID+"/model" {
		t.Errorf("model is written at %s", u)
	}
	if len(f.run(t, r.ID).Warnings) != 0 {
		t.Errorf("warnings: %q", f.run(t, r.ID).Warnings)
	}
}

// What a job cannot do with object-store data is refused at create, naming the field.
func TestObjectStoreDataRefused(t *testing.T) {
	f := newFixture(t)
	objectStores(t, f, lakeDS, blobDS, datastore.Datastore{Name: "lake2", Type: datastore.TypeS3, Bucket: "bk1"})
	in := func(in job.Input) job.Spec { return job.Spec{Command: "x", Inputs: map[string]job.Input{"a": in}} }
	out := func(o job.Output) job.Spec { return job.Spec{Command: "x", Outputs: map[string]job.Output{"o": o}} }
	for _, tt := range []struct {
		name string
		sp   job.Spec
		msg  string
	}{
		{"unknown datastore in an output path", out(job.Output{Path: "azureml://datastores/nope/paths/x"}),
			"outputs.o.path: no datastore named nope in this workspace (known: workspaceblobstore, ab, lake, lake2)"},
		{"an output in direct mode", out(job.Output{Type: job.MLTable, Mode: "direct", Path: "azureml://datastores/ab/paths/t"}),
			"outputs.o.mode: direct: an output in an object store is a local folder uploaded when the command ends (rw_mount, upload)"},
		{"an output at the container's top", out(job.Output{Path: "azureml://datastores/ab/paths/"}),
			"outputs.o.path: wasbs://data@acct1.blob.core.windows.net/ names no path inside the container"},
		{"a bad output URI", out(job.Output{Path: "gs://gbk/a/../../b"}), `outputs.o.path: gs://gbk/a/../../b: "a/../../b" is not a clean path`},
		{"a uri_file at the top", in(job.Input{Type: job.URIFile, Path: "azureml://datastores/ab/paths/"}),
			"inputs.a.path: a uri_file input names one object; wasbs://data@acct1.blob.core.windows.net/ is the whole container"},
		{"an input in rw_mount", in(job.Input{Type: job.URIFolder, Mode: "rw_mount", Path: "wasbs://data@acct1.blob.core.windows.net/x"}),
			"inputs.a.mode: rw_mount: an input in an object store is downloaded (ro_mount, download) or passed as its URI (direct)"},
		{"a SAS token in the URI", in(job.Input{Type: job.URIFolder, Path: "https://acct1.blob.core.windows.net/data/x?sv=1&sig=SECRET"}),
			"inputs.a.path: https://acct1.blob.core.windows.net/data/x?…: a query (a SAS token?) is not taken"},
		{"two datastores on the bucket", in(job.Input{Type: job.URIFolder, Path: "s3://bk1/x"}),
			"inputs.a.path: s3://bk1/x is in datastores lake and lake2, each with its own credentials: name one as azureml://datastores/<datastore>/paths/x"},
		{"a bad bucket", in(job.Input{Type: job.URIFolder, Path: "s3://B/x"}), `inputs.a.path: s3://B/x: "B" is not a bucket name`},
		{"unknown input datastore", in(job.Input{Type: job.URIFolder, Path: "azureml://datastores/nope/paths/x"}),
			"inputs.a.path: no datastore named nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: tt.sp})
			wantKind(t, err, Invalid, tt.msg)
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Errorf("the error repeats the SAS token: %v", err)
			}
		})
	}
}
