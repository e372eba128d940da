package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// putTree stores files (path → content) and their manifest, and returns the manifest's hash.
func putTree(t testing.TB, f *fixture, files map[string]string) string {
	t.Helper()
	m := &snapshot.Manifest{}
	dirs := map[string]bool{}
	for p, content := range files {
		h, err := f.c.Blobs.PutBytes([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		m.Entries = append(m.Entries, snapshot.Entry{Path: p, Type: snapshot.TypeFile, Hash: h, Size: int64(len(content)), Mode: 0o644})
		for d := parentDir(p); d != ""; d = parentDir(d) {
			if !dirs[d] {
				dirs[d] = true
				m.Entries = append(m.Entries, snapshot.Entry{Path: d, Type: snapshot.TypeDir, Mode: 0o755})
			}
		}
	}
	data, hash, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Blobs.PutBytes(data); err != nil {
		t.Fatal(err)
	}
	return hash
}

func parentDir(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}

// files lists a stored manifest's files as path → size.
func files(t testing.TB, f *fixture, hash string) map[string]int64 {
	t.Helper()
	m, err := f.c.readManifest(hash)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range m.Files() {
		out[e.Path] = e.Size
	}
	return out
}

func createModel(t testing.TB, f *fixture, sp model.Spec, manifest string) *model.Version {
	t.Helper()
	v, err := f.c.Workspace.Models.Create(t.Context(), api.CreateModelRequest{Spec: sp, Manifest: manifest})
	if err != nil {
		t.Fatalf("CreateModel(%+v): %v", sp, err)
	}
	return v
}

func TestCreateModelFromUploadVersionsAndConflicts(t *testing.T) {
	f := newFixture(t)
	h := putTree(t, f, map[string]string{"weights.bin": "0123456789", "cfg/config.json": "{}"})
	v1 := createModel(t, f, model.Spec{Name: "mnist", Path: "/client/model"}, h)
	want := &model.Version{Name: "mnist", Version: "1", Type: model.CustomModel, Manifest: h, Source: model.SourceLocal,
		Folder: "model", Files: 2, Size: 12, CreatedAt: f.clock.Now()}
	if diff := cmp.Diff(want, v1); diff != "" {
		t.Errorf("first version (-want +got):\n%s", diff)
	}
	if v2 := createModel(t, f, model.Spec{Name: "mnist", Type: "mlflow_model", Path: "/x"}, h); v2.Version != "2" || v2.Type != model.MLflowModel {
		t.Errorf("second version = %s %s, want 2 mlflow_model", v2.Version, v2.Type)
	}
	_, err := f.c.Workspace.Models.Create(t.Context(), api.CreateModelRequest{Spec: model.Spec{Name: "mnist", Version: "2", Path: "/x"}, Manifest: h})
	wantKind(t, err, Conflict, "model mnist version 2 already exists")

	for _, tt := range []struct {
		name string
		req  api.CreateModelRequest
		msg  string
	}{
		{"bad name", api.CreateModelRequest{Spec: model.Spec{Name: "a b", Path: "/x"}, Manifest: h}, "name:"},
		{"bad version", api.CreateModelRequest{Spec: model.Spec{Name: "m", Version: "beta:1", Path: "/x"}, Manifest: h}, `version "beta:1": expected letters, digits`},
		{"bad type", api.CreateModelRequest{Spec: model.Spec{Name: "m", Type: "uri_folder", Path: "/x"}, Manifest: h}, "expected one of custom_model"},
		{"not uploaded", api.CreateModelRequest{Spec: model.Spec{Name: "m", Path: "/x"}, Manifest: notUploaded}, "were not uploaded"},
		{"no path", api.CreateModelRequest{Spec: model.Spec{Name: "m"}}, "path: required"},
		{"datastore", api.CreateModelRequest{Spec: model.Spec{Name: "m", Path: "azureml://datastores/x/paths/y"}}, "is not supported by this workspace"},
		{"no such job", api.CreateModelRequest{Spec: model.Spec{Name: "m", Path: "azureml://jobs/ghost/outputs/model"}}, "no job named ghost"},
		{"escaping sub-path", api.CreateModelRequest{Spec: model.Spec{Name: "m", Path: "azureml://jobs/j/outputs/model/paths/../x"}}, "not a clean path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.c.Workspace.Models.Create(t.Context(), tt.req)
			wantKind(t, err, Invalid, tt.msg)
		})
	}
}

// A model from a job's output reuses the output's manifest; a sub-path gets a manifest of its
// own over the same blobs; the artifacts output includes the files logged through MLflow.
func TestCreateModelFromJobOutput(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	named := putTree(t, f, map[string]string{"model.pkl": "pickle", "sub/w.bin": "weights"})
	arts := putTree(t, f, map[string]string{"outputs/model/MLmodel": "flavors", "user_logs/std_log.txt": "log"})
	f.create(t, job.Spec{Name: "train"})
	if _, err := f.c.RegisterArtifacts(ctx, "train", api.ArtifactsReport{Artifacts: arts, NamedOutputs: map[string]string{"model": named}}); err != nil {
		t.Fatal(err)
	}
	up, err := f.c.Blobs.PutBytes([]byte("logged by mlflow"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Store.Tracking.PutMLflowArtifact(ctx, store.MLflowArtifact{RunID: "train", Path: "model/model.pkl", Hash: up, Size: 16}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want map[string]int64
	}{
		{"azureml://jobs/train/outputs/model", map[string]int64{"model.pkl": 6, "sub/w.bin": 7}},
		{"azureml://jobs/train/outputs/model/paths/sub/", map[string]int64{"w.bin": 7}},
		{"azureml://jobs/train/outputs/model/paths/model.pkl", map[string]int64{"model.pkl": 6}},
		{"azureml://jobs/train/outputs/artifacts/paths/outputs/model", map[string]int64{"MLmodel": 7}},
		{"azureml://jobs/train/outputs/artifacts/paths/model/", map[string]int64{"model.pkl": 16}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			v := createModel(t, f, model.Spec{Name: "m", Path: tt.path}, "")
			if v.Source != tt.path {
				t.Errorf("source = %q, want %q", v.Source, tt.path)
			}
			if diff := cmp.Diff(tt.want, files(t, f, v.Manifest)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
	if v := createModel(t, f, model.Spec{Name: "whole", Path: "azureml://jobs/train/outputs/model"}, ""); v.Manifest != named {
		t.Errorf("a whole named output got manifest %s, want the output's own %s (no copy)", v.Manifest, named)
	}
	for path, msg := range map[string]string{
		"azureml://jobs/train/outputs/model/paths/nothing": "nothing at nothing",
		"azureml://jobs/train/outputs/weights":             `job train has no output "weights"`,
		"azureml://jobs/train/model":                       "expected azureml://jobs/<job>/outputs/<output>",
		"azureml://jobs/train/outputs/model/sub":           "expected .../outputs/<output>/paths/<path>",
	} {
		_, err := f.c.Workspace.Models.Create(ctx, api.CreateModelRequest{Spec: model.Spec{Name: "m", Path: path}})
		wantKind(t, err, Invalid, msg)
	}
}

func TestResolveModelAndArchive(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	h := putTree(t, f, map[string]string{"w": "w"})
	for range 3 {
		createModel(t, f, model.Spec{Name: "m", Path: "/x"}, h)
	}
	resolve := func(ref string) string {
		t.Helper()
		v, err := f.c.Workspace.Models.Resolve(ctx, ref)
		if err != nil {
			t.Fatalf("ResolveModel(%q): %v", ref, err)
		}
		return v.Version
	}
	for ref, want := range map[string]string{"m:2": "2", "azureml:m:1": "1", "m@latest": "3", "azureml:m@latest": "3"} {
		if got := resolve(ref); got != want {
			t.Errorf("ResolveModel(%q) = version %s, want %s", ref, got, want)
		}
	}
	if err := f.c.Workspace.Models.SetArchived(ctx, "m", "3", true); err != nil {
		t.Fatal(err)
	}
	if got := resolve("m@latest"); got != "2" {
		t.Errorf("@latest with 3 archived = %s, want 2", got)
	}
	if got := resolve("m:3"); got != "3" {
		t.Errorf("an archived version named by number = %s, want it to resolve", got)
	}
	_, err := f.c.Workspace.Models.Resolve(ctx, "m:9")
	wantKind(t, err, NotFound, "no model m:9 in this workspace (its latest version is 2)")
	_, err = f.c.Workspace.Models.Resolve(ctx, "m")
	wantKind(t, err, Invalid, "give a version (m:1) or m@latest")
	if err := f.c.Workspace.Models.SetArchived(ctx, "m", "", true); err != nil {
		t.Fatal(err)
	}
	_, err = f.c.Workspace.Models.Resolve(ctx, "m@latest")
	wantKind(t, err, NotFound, "every version of it is archived")
	if err := f.c.Workspace.Models.SetArchived(ctx, "m", "2", false); err != nil {
		t.Fatal(err)
	}
	if got := resolve("m@latest"); got != "2" {
		t.Errorf("@latest after restoring 2 = %s", got)
	}
	wantKind(t, f.c.Workspace.Models.SetArchived(ctx, "ghost", "", true), NotFound, "no model ghost")
	wantKind(t, f.c.Workspace.Models.SetArchived(ctx, "m", "7", true), NotFound, "no model m version 7")
	wantKind(t, f.c.Workspace.Models.SetArchived(ctx, "m", "x/y", true), Invalid, "expected letters, digits")
}

// A job's input may name a registered model (azureml:<name>:<version> or @latest); the run gets
// the model's files. A model's manifest also works as a plain uri_folder input (ModelInput).
func TestJobInputNamesAModel(t *testing.T) {
	f := newFixture(t)
	h1 := putTree(t, f, map[string]string{"w": "one"})
	h2 := putTree(t, f, map[string]string{"w": "two!"})
	createModel(t, f, model.Spec{Name: "clf", Path: "/x"}, h1)
	createModel(t, f, model.Spec{Name: "clf", Path: "/x"}, h2)
	for _, tt := range []struct {
		typ, path, want string
	}{
		{job.CustomModel, "azureml:clf:1", h1},
		{job.MLflowModel, "azureml:clf@latest", h2},
		{job.URIFolder, "azureml:clf:2", h2},
	} {
		r := f.create(t, job.Spec{Inputs: map[string]job.Input{"model": {Type: tt.typ, Path: tt.path, Mode: "ro_mount"}}})
		if got := f.run(t, r.ID).Spec.Inputs["model"]; got.Manifest != tt.want || got.Path != tt.path {
			t.Errorf("%s %s resolved to %+v, want manifest %s", tt.typ, tt.path, got, tt.want)
		}
	}
	v, err := f.c.Workspace.Models.Resolve(t.Context(), "clf:1")
	if err != nil {
		t.Fatal(err)
	}
	r := f.create(t, job.Spec{Inputs: map[string]job.Input{"model": workspace.ModelInput(v)}})
	if got := f.run(t, r.ID).Spec.Inputs["model"]; got.Manifest != h1 || got.Type != job.URIFolder {
		t.Errorf("ModelInput ran as %+v", got)
	}
	for _, tt := range []struct {
		in  job.Input
		msg string
	}{
		{job.Input{Type: job.CustomModel, Path: "azureml:nope:1"}, "inputs.model.path: no model nope:1 in this workspace"},
		{job.Input{Type: job.URIFolder, Path: "azureml:mydata:1"}, "inputs.model.path: no data asset mydata:1 in this workspace (see hangar data list)"},
		{job.Input{Type: job.MLTable, Path: "azureml:clf:1"}, "inputs.model.path: no data asset clf:1 in this workspace"},
		{job.Input{Type: job.CustomModel, Path: "azureml:clf"}, "give a version (clf:1) or clf@latest"},
	} {
		_, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Command: "x", Inputs: map[string]job.Input{"model": tt.in}}})
		wantKind(t, err, Invalid, tt.msg)
	}
}
