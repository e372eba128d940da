package controller

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
)

func createData(t testing.TB, f *fixture, sp dataset.Spec, manifest string) *dataset.Version {
	t.Helper()
	v, err := f.c.Workspace.Data.Create(t.Context(), api.CreateDataRequest{Spec: sp, Manifest: manifest})
	if err != nil {
		t.Fatalf("CreateData(%+v): %v", sp, err)
	}
	return v
}

// An upload becomes version 1, 2, ...; it is written at LocalUpload/<id>/<name> in
// workspaceblobstore; types are checked against the files; a taken version is a conflict.
func TestCreateDataFromUpload(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	h := putTree(t, f, map[string]string{"a.csv": "1,2", "sub/b.csv": "3"})
	v1 := createData(t, f, dataset.Spec{Name: "iris", Path: "/client/iris/", Meta: asset.Meta{Tags: map[string]string{"k": "v"}}}, h)
	up := "azureml://datastores/workspaceblobstore/paths/" + datastore.UploadPath(h, "/client/iris/")
	want := &dataset.Version{Name: "iris", Version: "1", Type: dataset.URIFolder, Manifest: h, Path: up, Source: dataset.SourceLocal,
		Meta: asset.Meta{Tags: map[string]string{"k": "v"}}, Files: 2, Size: 4, CreatedAt: f.clock.Now()}
	if diff := cmp.Diff(want, v1); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	if v2 := createData(t, f, dataset.Spec{Name: "iris", Path: "/client/iris"}, h); v2.Version != "2" {
		t.Errorf("second version = %s", v2.Version)
	}
	got, err := f.c.Workspace.Data.Resolve(ctx, "azureml:iris@latest")
	if err != nil || got.Version != "2" {
		t.Errorf("iris@latest = %+v, %v", got, err)
	}
	if m, err := f.c.Workspace.BlobStorePath(ctx, datastore.URI{Datastore: datastore.WorkspaceBlobStore, Path: datastore.UploadPath(h, "iris") + "/sub"}); err != nil ||
		!cmp.Equal(files(t, f, m), map[string]int64{"b.csv": 1}) {
		t.Errorf("the upload's sub folder in workspaceblobstore = %s, %v", m, err)
	}
	table := putTree(t, f, map[string]string{"MLTable": "paths: []", "t.csv": "x"})
	createData(t, f, dataset.Spec{Name: "tbl", Type: dataset.MLTable, Path: "/c/tbl"}, table)
	for _, tt := range []struct {
		name string
		sp   dataset.Spec
		kind Kind
		msg  string
	}{
		{"taken version", dataset.Spec{Name: "iris", Version: "2", Path: "/c"}, Conflict, "data asset iris version 2 already exists; omit the version"},
		{"mltable without MLTable", dataset.Spec{Name: "t", Type: dataset.MLTable, Path: "/c/t"}, Invalid, "path: type mltable: /c/t has no MLTable file"},
		{"uri_file of two files", dataset.Spec{Name: "t", Type: dataset.URIFile, Path: "/c/t"}, Invalid, "holds 2 files, expected one file"},
		{"bad type", dataset.Spec{Name: "t", Type: "csv", Path: "/c"}, Invalid, "expected one of uri_folder, uri_file, mltable"},
		{"bad version", dataset.Spec{Name: "t", Version: "v 2", Path: "/c"}, Invalid, "expected letters, digits"},
		{"bad name", dataset.Spec{Name: "a b", Path: "/c"}, Invalid, "not a data asset name"},
		{"other datastore", dataset.Spec{Name: "t", Path: "/c", Datastore: "mine"}, Invalid, "uploads go to workspaceblobstore"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.c.Workspace.Data.Create(ctx, api.CreateDataRequest{Spec: tt.sp, Manifest: h})
			wantKind(t, err, tt.kind, tt.msg)
		})
	}
}

// Other sources: a job output (manifest reused), a workspaceblobstore path, a local_folder path
// and an http(s) file (read where they are); unreachable ones refused.
func TestCreateDataFromURIs(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	named := putTree(t, f, map[string]string{"x.csv": "123", "d/y.csv": "45"})
	f.create(t, job.Spec{Name: "prep", Outputs: map[string]job.Output{
		"o": {Type: job.URIFolder, Path: "azureml://datastores/${{default_datastore}}/paths/prepared/${{name}}/"}}})
	if _, err := f.c.RegisterArtifacts(ctx, "prep", api.ArtifactsReport{Artifacts: putTree(t, f, map[string]string{"user_logs/std_log.txt": "log"}), NamedOutputs: map[string]string{"o": named}}); err != nil {
		t.Fatal(err)
	}
	shared := t.TempDir()
	if _, err := f.c.Workspace.Datastores.Create(ctx, datastore.Datastore{Name: "shared", Type: datastore.TypeLocalFolder, Path: shared}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, typ string
		manifest  string
		files     map[string]int64
	}{
		{path: "azureml://jobs/prep/outputs/o", manifest: named},
		{path: "azureml://datastores/workspaceblobstore/paths/prepared/prep", manifest: named},
		{path: "azureml://datastores/workspaceblobstore/paths/prepared/prep/d/", files: map[string]int64{"y.csv": 2}},
		{path: "azureml://datastores/workspaceblobstore/paths/azureml/prep/o/x.csv", typ: dataset.URIFile, files: map[string]int64{"x.csv": 3}},
		{path: "azureml://datastores/shared/paths/raw"},
		{path: "https://example.com/t.csv", typ: dataset.URIFile},
	} {
		t.Run(tt.path, func(t *testing.T) {
			v := createData(t, f, dataset.Spec{Name: "d", Type: tt.typ, Path: tt.path}, "")
			switch {
			case tt.manifest != "" && v.Manifest != tt.manifest:
				t.Errorf("manifest %s, want the output's own %s (no copy)", v.Manifest, tt.manifest)
			case tt.files != nil && !cmp.Equal(files(t, f, v.Manifest), tt.files):
				t.Errorf("files = %v, want %v", files(t, f, v.Manifest), tt.files)
			case tt.manifest == "" && tt.files == nil && (v.Manifest != "" || v.Path != tt.path):
				t.Errorf("read in place: %+v", v)
			}
			if v.Source != tt.path {
				t.Errorf("source = %s", v.Source)
			}
		})
	}
	for path, msg := range map[string]string{
		"azureml://datastores/workspaceblobstore/paths/nowhere": "nothing was written at azureml://datastores/workspaceblobstore/paths/nowhere",
		"azureml://datastores/ghost/paths/x":                    "no datastore named ghost in this workspace (known: workspaceblobstore, shared)",
		"azureml://datastores/shared/paths/../etc":              "not a clean path",
		"wasbs://acct.blob.core.windows.net/c/x":                "expected wasbs://<container>@<account>.blob.core.windows.net/<path>",
		"https://example.com/folder/":                           "use type uri_file",
		"azureml://jobs/ghost/outputs/o":                        "no job named ghost",
	} {
		_, err := f.c.Workspace.Data.Create(ctx, api.CreateDataRequest{Spec: dataset.Spec{Name: "d", Path: path}})
		wantKind(t, err, Invalid, msg)
	}
}

// Job inputs naming data assets get their files; uri_folder falls back to a model of the name;
// a missing asset or version is refused naming the field and what exists; archived versions
// resolve by number but not as @latest.
func TestJobInputNamesDataAsset(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	h1 := putTree(t, f, map[string]string{"a": "one"})
	h2 := putTree(t, f, map[string]string{"a": "two"})
	table := putTree(t, f, map[string]string{"MLTable": "paths: []"})
	createData(t, f, dataset.Spec{Name: "iris", Path: "/c/iris"}, h1)
	createData(t, f, dataset.Spec{Name: "iris", Path: "/c/iris"}, h2)
	createData(t, f, dataset.Spec{Name: "tbl", Type: dataset.MLTable, Path: "/c/tbl"}, table)
	createModel(t, f, model.Spec{Name: "clf", Path: "/x"}, h1)
	if err := f.c.Workspace.Data.SetArchived(ctx, "iris", "2", true); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		typ, path, want string
	}{
		{job.URIFolder, "azureml:iris@latest", h1},
		{job.URIFolder, "azureml:iris:2", h2},
		{job.URIFile, "azureml:iris:1", h1},
		{job.MLTable, "azureml:tbl@latest", table},
		{job.URIFolder, "azureml:clf:1", h1},
	} {
		r := f.create(t, job.Spec{Inputs: map[string]job.Input{"d": {Type: tt.typ, Path: tt.path, Mode: "ro_mount"}}})
		if got := f.run(t, r.ID).Spec.Inputs["d"]; got.Manifest != tt.want || got.Path != tt.path {
			t.Errorf("%s %s resolved to %+v, want manifest %s", tt.typ, tt.path, got, tt.want)
		}
	}
	createData(t, f, dataset.Spec{Name: "web", Type: dataset.URIFile, Path: "https://example.com/t.csv"}, "")
	r := f.create(t, job.Spec{Inputs: map[string]job.Input{"d": {Type: job.URIFile, Path: "azureml:web:1"}}})
	if got := f.run(t, r.ID).Spec.Inputs["d"]; got.Path != "https://example.com/t.csv" || got.Manifest != "" {
		t.Errorf("an http(s) data asset resolved to %+v, want its URL for the node to download", got)
	}
	two := putTree(t, f, map[string]string{"a": "1", "b": "2"})
	createData(t, f, dataset.Spec{Name: "pair", Path: "/c/pair"}, two)
	for _, tt := range []struct {
		in  job.Input
		msg string
	}{
		{job.Input{Type: job.URIFolder, Path: "azureml:nope@latest"}, "inputs.d.path: no data asset nope@latest in this workspace (see hangar data list)"},
		{job.Input{Type: job.URIFolder, Path: "azureml:iris:7"}, "inputs.d.path: no data asset iris:7 in this workspace (its latest version is 1)"},
		{job.Input{Type: job.MLTable, Path: "azureml:clf:1"}, "inputs.d.path: no data asset clf:1"},
		{job.Input{Type: job.URIFile, Path: "azureml:pair:1"}, "inputs.d.path: data asset azureml:pair:1 holds 2 files; a uri_file input needs one"},
		{job.Input{Type: job.URIFolder, Path: "azureml:iris"}, "give a version (iris:1) or iris@latest"},
		{job.Input{Type: job.URIFolder, Path: "azureml:web@latest"}, "inputs.d.path: data asset azureml:web@latest is the file https://example.com/t.csv, read over http(s): use type uri_file"},
	} {
		_, err := f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x", Inputs: map[string]job.Input{"d": tt.in}}})
		wantKind(t, err, Invalid, tt.msg)
	}
	wantKind(t, f.c.Workspace.Data.SetArchived(ctx, "ghost", "", true), NotFound, "no data asset ghost")
	wantKind(t, f.c.Workspace.Data.SetArchived(ctx, "iris", "9", true), NotFound, "no data asset iris version 9")
	if err := f.c.Workspace.Data.SetArchived(ctx, "iris", "", true); err != nil {
		t.Fatal(err)
	}
	_, err := f.c.Workspace.Data.Resolve(ctx, "iris@latest")
	wantKind(t, err, NotFound, "every version of it is archived: hangar data restore")
}

// Datastore inputs: workspaceblobstore paths written by an earlier job's output (refused while
// it has not written them); a local_folder read in place only on targets that mount it.
func TestDatastoreInputs(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.create(t, job.Spec{Name: "writer", Outputs: map[string]job.Output{
		"o": {Type: job.URIFolder, Path: "azureml://datastores/workspaceblobstore/paths/shared/${{output_name}}/"}}})
	in := job.Input{Type: job.URIFolder, Path: "azureml://datastores/workspaceblobstore/paths/shared/o/sub"}
	_, err := f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x", Inputs: map[string]job.Input{"d": in}}})
	wantKind(t, err, Invalid, "inputs.d.path: azureml://datastores/workspaceblobstore/paths/shared/o is written by job writer (output o), which has not written it (status Queued)")
	out := putTree(t, f, map[string]string{"sub/f.txt": "hello"})
	if _, err := f.c.RegisterArtifacts(ctx, "writer", api.ArtifactsReport{Artifacts: putTree(t, f, map[string]string{"user_logs/std_log.txt": "log"}), NamedOutputs: map[string]string{"o": out}}); err != nil {
		t.Fatal(err)
	}
	r := f.create(t, job.Spec{Inputs: map[string]job.Input{"d": in}})
	if got := f.run(t, r.ID).Spec.Inputs["d"]; !cmp.Equal(files(t, f, got.Manifest), map[string]int64{"f.txt": 5}) {
		t.Errorf("input from the written path = %+v", got)
	}

	shared := t.TempDir()
	if err := os.MkdirAll(filepath.Join(shared, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Workspace.Datastores.Create(ctx, datastore.Datastore{Name: "nfs", Type: datastore.TypeLocalFolder, Path: shared}, nil); err != nil {
		t.Fatal(err)
	}
	r = f.create(t, job.Spec{Inputs: map[string]job.Input{"d": {Type: job.URIFolder, Path: "azureml://datastores/nfs/paths/raw/", Mode: "ro_mount"}}})
	if got := f.run(t, r.ID).Spec.Inputs["d"]; got.Path != filepath.Join(shared, "raw") || got.Mode != "direct" || got.Manifest != "" {
		t.Errorf("local_folder input = %+v, want read in place at %s", got, filepath.Join(shared, "raw"))
	}
	_, err = f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x", Inputs: map[string]job.Input{
		"d": {Type: job.URIFolder, Path: "azureml://datastores/nfs/paths/missing"}}}})
	wantKind(t, err, Invalid, "inputs.d.path: azureml://datastores/nfs/paths/missing is "+filepath.Join(shared, "missing")+" on datastore nfs, which does not exist here")
	if _, err := f.c.Workspace.Datastores.Create(ctx, datastore.Datastore{Name: "nfs", Type: datastore.TypeLocalFolder, Path: shared, Computes: []string{"gpu"}}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x", Inputs: map[string]job.Input{
		"d": {Type: job.URIFolder, Path: "azureml://datastores/nfs/paths/raw"}}}})
	wantKind(t, err, Invalid, "datastore nfs ("+shared+") is not mounted on the nodes of compute local (its computes: gpu)")
}

// Datastores: workspaceblobstore always first and not replaceable; Azure's file shares refused.
func TestDatastoresListAndCreate(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	for _, tt := range []struct {
		d   datastore.Datastore
		msg string
	}{
		{datastore.Datastore{Name: "workspaceblobstore", Type: datastore.TypeLocalFolder, Path: "/x"}, "cannot be replaced"},
		{datastore.Datastore{Name: "files", Type: "azure_file"}, "type azure_file: an Azure file share is an SMB share"},
		{datastore.Datastore{Name: "rel", Type: datastore.TypeLocalFolder, Path: "data"}, "clean absolute folder path"},
		{datastore.Datastore{Name: "-ab", Type: datastore.TypeLocalFolder, Path: "/x"}, "not a datastore name"},
	} {
		_, err := f.c.Workspace.Datastores.Create(ctx, tt.d, nil)
		wantKind(t, err, Invalid, tt.msg)
	}
	if _, err := f.c.Workspace.Datastores.Create(ctx, datastore.Datastore{Name: "nfs", Type: datastore.TypeLocalFolder, Path: "/shared/data"}, nil); err != nil {
		t.Fatal(err)
	}
	all, err := f.c.Workspace.Datastores.List(ctx)
	if err != nil || len(all) != 2 || all[0].Name != "workspaceblobstore" || !all[0].Builtin || all[1].Path != "/shared/data" {
		t.Errorf("Datastores = %+v, %v", all, err)
	}
	_, err = f.c.Workspace.Datastores.Get(ctx, "ghost")
	wantKind(t, err, NotFound, "no datastore named ghost in this workspace (known: workspaceblobstore, nfs)")
}
