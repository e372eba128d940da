package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// notUploaded is a valid blob hash that no test stores.
const notUploaded = "0000000000000000000000000000000000000000000000000000000000000001"

func TestCreateValidation(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		spec  job.Spec
		kind  Kind
		parts []string // the message mentions each
	}{
		{
			name: "unknown compute lists the known targets",
			spec: job.Spec{Compute: "gpu-cluster"},
			kind: Invalid, parts: []string{`"gpu-cluster"`, "known: local"},
		},
		{
			name: "serverless",
			spec: job.Spec{Compute: "serverless"},
			kind: Invalid, parts: []string{"serverless compute runs on managed clusters, which this server does not run", "local"},
		},
		{
			name: "compute type without a backend",
			setup: func(t *testing.T, f *fixture) {
				if err := f.c.Store.Cluster.PutCompute(t.Context(), compute.Target{Name: "hpc", Type: compute.TypeSlurm}); err != nil {
					t.Fatal(err)
				}
			},
			spec: job.Spec{Compute: "hpc"},
			kind: Invalid, parts: []string{"slurm targets (hpc) cannot run jobs"},
		},
		{
			name: "two instances on the local target",
			spec: job.Spec{Resources: job.Resources{InstanceCount: 2}},
			kind: Invalid, parts: []string{"resources.instance_count", "asks for 2"},
		},
		{
			name: "not a command job",
			spec: job.Spec{Type: "automl"},
			kind: Invalid, parts: []string{`job type "automl"`},
		},
		{
			name: "a sweep without its settings",
			spec: job.Spec{Type: "sweep"},
			kind: Invalid, parts: []string{"sweep: the sweep's settings are missing"},
		},
		{
			name: "blank command",
			spec: job.Spec{Command: "  \n"},
			kind: Invalid, parts: []string{"command: required"},
		},
		{
			name: "a value that bash arithmetic would run, sent past the CLI",
			spec: job.Spec{Command: "echo $(( ${{inputs.n}} + 1 ))",
				Inputs: map[string]job.Input{"n": {Type: "string", Value: "a[$(touch /tmp/x)]"}}},
			kind: Invalid, parts: []string{"command:", "arithmetic", "must be an integer"},
		},
		{
			name: "bad name",
			spec: job.Spec{Name: "-dash-first"},
			kind: Invalid, parts: []string{"name:", "-dash-first"},
		},
		{
			name: "name already taken",
			setup: func(t *testing.T, f *fixture) {
				f.create(t, job.Spec{Name: "taken"})
			},
			spec: job.Spec{Name: "taken"},
			kind: Conflict, parts: []string{"a job named taken already exists"},
		},
		{
			name: "code snapshot not uploaded",
			spec: job.Spec{CodeSnapshot: notUploaded},
			kind: Invalid, parts: []string{"code: snapshot " + notUploaded + " was not uploaded"},
		},
		{
			name: "data input not uploaded",
			spec: job.Spec{Inputs: map[string]job.Input{"data": {Type: job.URIFolder, Path: "/home/me/data", Manifest: notUploaded}}},
			kind: Invalid, parts: []string{"inputs.data: data " + notUploaded + " was not uploaded"},
		},
		{
			name: "datastore input",
			spec: job.Spec{Inputs: map[string]job.Input{"data": {Type: job.URIFolder, Path: "azureml://datastores/blobstore/paths/data/"}}},
			kind: Invalid, parts: []string{"inputs.data.path: no datastore named blobstore in this workspace (known: workspaceblobstore)"},
		},
		{
			name: "data asset input",
			spec: job.Spec{Inputs: map[string]job.Input{"data": {Type: job.URIFolder, Path: "azureml:my-data:1"}}},
			kind: Invalid, parts: []string{"inputs.data.path: no data asset my-data:1 in this workspace (see hangar data list)"},
		},
		{
			name: "unsupported URI scheme",
			spec: job.Spec{Inputs: map[string]job.Input{"data": {Type: job.URIFolder, Path: "ftp://host/data"}}},
			kind: Invalid, parts: []string{"inputs.data.path: ftp://host/data is not supported"},
		},
		{
			name: "output of a job that does not exist",
			spec: job.Spec{Inputs: map[string]job.Input{"m": {Type: job.URIFolder, Path: "azureml://jobs/ghost/outputs/model"}}},
			kind: Invalid, parts: []string{"inputs.m.path: no job named ghost"},
		},
		{
			name: "malformed job output reference",
			spec: job.Spec{Inputs: map[string]job.Input{"m": {Type: job.URIFolder, Path: "azureml://jobs/ghost/model"}}},
			kind: Invalid, parts: []string{"expected azureml://jobs/<job>/outputs/<output>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(t, f)
			}
			sp := tt.spec
			if sp.Command == "" {
				sp.Command = "python train.py"
			}
			before, err := f.c.Store.Runs.List(t.Context(), storeAll)
			if err != nil {
				t.Fatal(err)
			}
			r, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: sp})
			if err == nil {
				t.Fatalf("Create accepted the job as %s", r.ID)
			}
			wantKind(t, err, tt.kind, tt.parts...)
			after, err := f.c.Store.Runs.List(t.Context(), storeAll)
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) {
				t.Errorf("a refused job left a run behind: %d runs before, %d after", len(before), len(after))
			}
		})
	}
}

func TestCreateQueuesRun(t *testing.T) {
	f := newFixture(t)
	code, err := f.c.Blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	sp := job.Spec{
		Name: "my-run_1", Command: "python train.py", CodeSnapshot: code,
		Resources:    job.Resources{InstanceType: "Standard_NC6"},
		Distribution: &job.Distribution{Type: "pytorch"},
		Outputs:      map[string]job.Output{"model": {Type: job.URIFolder, Path: "azureml://datastores/workspaceblobstore/paths/"}},
		Inputs:       map[string]job.Input{"lr": {Type: job.InputNumber, Value: "0.1"}, "web": {Type: job.URIFile, Path: "https://example.com/a.csv"}},
	}
	r, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: sp, Warnings: []string{"from the client"}})
	if err != nil {
		t.Fatal(err)
	}
	got := f.run(t, "my-run_1")
	if diff := cmp.Diff(r, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("returned run differs from the stored one (-returned +stored):\n%s", diff)
	}
	want := []string{
		"from the client",
		"outputs.model.path is ignored: outputs are kept in the workspace under the job",
		"resources.instance_type is ignored on the local target",
	}
	if diff := cmp.Diff(want, got.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if got.Status != job.Queued || got.Compute != compute.LocalName || got.Spec.Compute != compute.LocalName ||
		got.ExperimentName != "Default" || got.Spec.Name != "my-run_1" || !got.CreatedAt.Equal(f.clock.Now()) {
		t.Errorf("stored run: status %s, compute %q/%q, experiment %q, spec name %q, created %v",
			got.Status, got.Compute, got.Spec.Compute, got.ExperimentName, got.Spec.Name, got.CreatedAt)
	}
	if diff := cmp.Diff([]string{"->NotStarted", "NotStarted->Queued"}, f.transitions(t, r.ID)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got.Spec.Inputs["web"].Manifest != "" {
		t.Errorf("an http input got a manifest: %+v", got.Spec.Inputs["web"])
	}
}

func TestCreateGeneratesName(t *testing.T) {
	f := newFixture(t)
	r := f.create(t, job.Spec{DisplayName: "mine"})
	if !runNameRE.MatchString(r.ID) || r.Spec.Name != r.ID || r.DisplayName != "mine" {
		t.Errorf("generated run: id %q, spec name %q, display %q", r.ID, r.Spec.Name, r.DisplayName)
	}
}

func TestCreateUsesDefaultCompute(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if err := f.c.Store.Cluster.PutCompute(ctx, compute.Target{Name: "box", Type: compute.TypeLocal}); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Store.SetSetting(ctx, workspace.SettingDefaultCompute, "box"); err != nil {
		t.Fatal(err)
	}
	if r := f.create(t, job.Spec{}); r.Compute != "box" {
		t.Errorf("a job naming no compute went to %q, want the default box", r.Compute)
	}
	if r := f.create(t, job.Spec{Compute: "local"}); r.Compute != "local" {
		t.Errorf("a job naming local went to %q", r.Compute)
	}
}

func TestCreateResolvesJobOutputs(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	artifacts, err := f.c.Blobs.PutBytes([]byte(`{"entries":[{"path":"a","type":"dir","mode":493}]}`))
	if err != nil {
		t.Fatal(err)
	}
	model, err := f.c.Blobs.PutBytes([]byte(`{"entries":[{"path":"m","type":"dir","mode":493}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f.create(t, job.Spec{Name: "train"})
	if _, err := f.c.RegisterArtifacts(ctx, "train", api.ArtifactsReport{Artifacts: artifacts, NamedOutputs: map[string]string{"model": model}}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path string
		want string // the resolved manifest
	}{
		{"azureml://jobs/train/outputs/model", model},
		{"azureml://jobs/train/outputs/default", artifacts},
		{"azureml://jobs/train/outputs/artifacts", artifacts},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := f.create(t, job.Spec{Inputs: map[string]job.Input{"m": {Type: job.URIFolder, Path: tt.path}}})
			in := f.run(t, r.ID).Spec.Inputs["m"]
			if in.Manifest != tt.want || in.Path != tt.path {
				t.Errorf("input resolved to manifest %q (path %q), want %q", in.Manifest, in.Path, tt.want)
			}
		})
	}

	_, err = f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x",
		Inputs: map[string]job.Input{"m": {Type: job.URIFolder, Path: "azureml://jobs/train/outputs/weights"}}}})
	wantKind(t, err, Invalid, `job train has no output "weights"`)
	_, err = f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "x",
		Inputs: map[string]job.Input{"m": {Type: job.URIFolder, Path: "azureml://jobs/train/outputs/model/paths/sub"}}}})
	wantKind(t, err, Invalid, "sub-paths of job outputs are not supported")
}

func TestRegisterArtifactsNeedsUploadedManifests(t *testing.T) {
	f := newFixture(t)
	f.create(t, job.Spec{Name: "r"})
	_, err := f.c.RegisterArtifacts(t.Context(), "r", api.ArtifactsReport{Artifacts: notUploaded})
	wantKind(t, err, Invalid, notUploaded)
	if got := f.run(t, "r").ArtifactsHash; got != "" {
		t.Errorf("artifacts recorded although not uploaded: %q", got)
	}
}
