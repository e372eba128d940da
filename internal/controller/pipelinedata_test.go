package controller

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pipeline"
)

// writeThenRead is Azure's 4b_datastore_datapath_uri, shortened: "write" writes its output at a
// workspaceblobstore path of Azure's default layout (azureml/<folder>), "read" reads a file in it
// (after write: it reads write's output as a placeholder).
func writeThenRead(file string) job.Spec {
	const at = "azureml://datastores/workspaceblobstore/paths/azureml/4b_datapath"
	write := pstep("echo hi > ${{outputs.out}}/hello.txt", []string{"out"})
	write.Spec.Outputs["out"] = job.Output{Type: job.URIFolder, Mode: "rw_mount", Path: at}
	read := pstep("cat ${{inputs.f}}", nil, "placeholder=write.out")
	read.Spec.Inputs = map[string]job.Input{
		"f":           {Type: job.URIFile, Mode: "download", Path: at + "/" + file},
		"placeholder": {Type: job.URIFolder, Mode: "ro_mount"},
	}
	return job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{Steps: map[string]job.PipelineStep{"write": write, "read": read}}}
}

// A path one step writes and a later one reads is resolved when the reader starts, as Azure
// resolves it: the pipeline is accepted though nothing is there at submit (the path reads like
// Azure's azureml/<job>/<output> layout, and no job of that name is refused as "no job named"),
// and the reader gets the file the writer wrote.
func TestStepReadsAPathAnEarlierStepWrote(t *testing.T) {
	f := newFixture(t)
	p := f.createPipeline(t, writeThenRead("hello.txt"))
	f.pipelinePass(t)
	write := p.ID + "_write"
	f.reconcile(t)
	f.report(t, write, job.Running)
	out := putTree(t, f, map[string]string{"hello.txt": "hi\n"})
	if _, err := f.c.Store.RunWrites.UpdateRun(t.Context(), write, func(r *job.Run) ([]job.Event, error) {
		r.NamedOutputs = map[string]string{"out": out}
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	f.report(t, write, job.Completed)
	f.pipelinePass(t)
	read := f.run(t, p.ID+"_read")
	in := read.Spec.Inputs["f"]
	m, err := f.c.readManifest(in.Manifest)
	if err != nil {
		t.Fatalf("the reader's input %+v: %v", in, err)
	}
	if files := m.Files(); len(files) != 1 || files[0].Path != "hello.txt" || files[0].Hash != fileHash(t, f, out, "hello.txt") {
		t.Errorf("the reader's input holds %+v, want the writer's hello.txt", files)
	}
}

// A path still missing when the reader starts fails that step with what is missing and who was
// to write it, not with "no job named <folder>".
func TestStepReadingAMissingPathFailsWhenItStarts(t *testing.T) {
	f := newFixture(t)
	p := f.createPipeline(t, writeThenRead("other.txt"))
	f.pipelinePass(t)
	f.complete(t, p.ID+"_write") // its output is a manifest without other.txt
	if _, err := f.c.Store.RunWrites.UpdateRun(t.Context(), p.ID+"_write", func(r *job.Run) ([]job.Event, error) {
		r.NamedOutputs = map[string]string{"out": putTree(t, f, map[string]string{"hello.txt": "hi\n"})}
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	f.pipelinePass(t)
	st := f.steps(t, p.ID)["read"]
	if st.State != string(pipeline.Failed) || !strings.Contains(st.Reason, "input f: azureml://datastores/workspaceblobstore/paths/azureml/4b_datapath/other.txt") ||
		strings.Contains(st.Reason, "no job named") {
		t.Errorf("read = %+v; want it failed naming the missing path", st)
	}

	// A job reading a path nobody writes is still refused at submit, and not as "no job named".
	_, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Type: "command", Command: "cat ${{inputs.f}}", Compute: "local",
		Inputs: map[string]job.Input{"f": {Type: job.URIFile, Mode: "download", Path: "azureml://datastores/workspaceblobstore/paths/azureml/nobody/x.txt"}}}})
	wantKind(t, err, Invalid, "inputs.f.path: nothing was written at azureml://datastores/workspaceblobstore/paths/azureml/nobody/x.txt")
}

// fileHash is the hash of file in the manifest h.
func fileHash(t *testing.T, f *fixture, h, file string) string {
	t.Helper()
	m, err := f.c.readManifest(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Files() {
		if e.Path == file {
			return e.Hash
		}
	}
	t.Fatalf("%s has no %s", h, file)
	return ""
}

// Which inputs wait for their step to start: those at a workspaceblobstore path another step's
// output writes (${{name}} is that step's run name), the same path or one inside the other.
func TestWrittenLater(t *testing.T) {
	const ws = "azureml://datastores/workspaceblobstore/paths/"
	w := pstep("w", []string{"a", "b"})
	w.Spec.Outputs["a"] = job.Output{Type: job.URIFolder, Path: ws + "${{name}}/a"}
	w.Spec.Outputs["b"] = job.Output{Type: job.URIFile, Path: ws + "shared/b.csv"}
	p := job.PipelineRun{Steps: map[string]job.PipelineStep{"w": w, "r": pstep("r", nil)}}
	inputs := map[string]job.Input{
		"own":      {Type: job.URIFolder, Path: ws + "pl_w/a/sub"},
		"parent":   {Type: job.URIFolder, Path: ws + "shared"},
		"file":     {Type: job.URIFile, Path: ws + "shared/b.csv"},
		"other":    {Type: job.URIFolder, Path: ws + "elsewhere"},
		"sibling":  {Type: job.URIFolder, Path: ws + "shared/b.csvx"},
		"uploaded": {Type: job.URIFolder, Path: ws + "shared", Manifest: "h"},
		"literal":  {Type: job.InputString, Value: ws + "shared"},
	}
	got := writtenLater(p, "pl", "r", inputs)
	if want := []string{"file", "own", "parent"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("writtenLater = %v, want %v", got, want)
	}
	if got := writtenLater(p, "pl", "w", map[string]job.Input{"x": inputs["file"]}); len(got) != 0 {
		t.Errorf("a step's own output waits for it: %v", got)
	}
}

// settings.default_datastore on an object store gives each data output without a path Azure's
// default place on it, and names it in ${{default_datastore}}; models and outputs with a path
// of their own stay as they are.
func TestDefaultDatastoreOutputs(t *testing.T) {
	steps := map[string]job.PipelineStep{
		"prep": {Spec: job.Spec{Outputs: map[string]job.Output{
			"folder": {},
			"file":   {Type: job.URIFile, Mode: "upload"},
			"table":  {Type: job.MLTable},
			"model":  {Type: job.MLflowModel},
			"given":  {Type: job.URIFolder, Path: "azureml://datastores/${{default_datastore}}/paths/shared/${{name}}/"},
			"other":  {Type: job.URIFolder, Path: "azureml://datastores/workspaceblobstore/paths/kept/"},
		}}},
	}
	before := steps["prep"].Spec.Outputs
	defaultDatastoreOutputs(steps, "lake")
	want := map[string]job.Output{
		"folder": {Path: "azureml://datastores/lake/paths/azureml/${{name}}/${{output_name}}/"},
		"file":   {Type: job.URIFile, Mode: "upload", Path: "azureml://datastores/lake/paths/azureml/${{name}}/${{output_name}}"},
		"table":  {Type: job.MLTable, Path: "azureml://datastores/lake/paths/azureml/${{name}}/${{output_name}}/"},
		"model":  {Type: job.MLflowModel},
		"given":  {Type: job.URIFolder, Path: "azureml://datastores/lake/paths/shared/${{name}}/"},
		"other":  {Type: job.URIFolder, Path: "azureml://datastores/workspaceblobstore/paths/kept/"},
	}
	if diff := cmp.Diff(want, steps["prep"].Spec.Outputs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if before["folder"].Path != "" {
		t.Errorf("the step's output map given was changed in place: %+v", before["folder"])
	}
}

// A default_datastore that does not exist, or is not one outputs can be written to, is refused
// at create naming the field; workspaceblobstore changes nothing.
func TestPipelineDefaultDatastoreRefused(t *testing.T) {
	f := newFixture(t)
	if err := f.c.Store.Assets.PutDatastore(t.Context(), datastore.Datastore{Name: "nfs", Type: datastore.TypeLocalFolder,
		Path: t.TempDir(), CreatedAt: f.c.Now()}, ""); err != nil {
		t.Fatal(err)
	}
	pipe := func(ds string) job.Spec {
		return job.Spec{Type: "pipeline", Pipeline: &job.PipelineRun{Settings: job.PipelineSettings{DefaultDatastore: ds},
			Steps: map[string]job.PipelineStep{"prep": pstep("echo hi", []string{"out"})}}}
	}
	for ds, want := range map[string]string{
		"nope": "settings.default_datastore: no datastore named nope in this workspace",
		"nfs":  "settings.default_datastore: datastore nfs is a local_folder datastore; outputs are written to workspaceblobstore or to an object-store datastore",
	} {
		_, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: pipe(ds)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("default_datastore %s: %v, want %q", ds, err, want)
		}
	}
	p := f.createPipeline(t, pipe(datastore.WorkspaceBlobStore))
	if o := p.Spec.Pipeline.Steps["prep"].Spec.Outputs["out"]; o.Path != "" || o.Store != nil {
		t.Errorf("workspaceblobstore as the default changed the step's output: %+v", o)
	}
}

// prep writes its output to an object-store datastore and train reads it: train's run gets the
// place prep's run wrote (prep's run name in the path), not a manifest; with default_datastore
// on that store, train's output without a path is written there at Azure's default place.
func TestPipelineStepReadsAnObjectStoreOutput(t *testing.T) {
	f := newFixture(t)
	if err := f.c.Store.Assets.PutDatastore(t.Context(), datastore.Datastore{Name: "lake", Type: datastore.TypeS3,
		Bucket: "bkt", EndpointURL: "http://127.0.0.1:9", Region: "us-east-1", CreatedAt: f.c.Now()}, ""); err != nil {
		t.Fatal(err)
	}
	sp := chainSpec()
	sp.Pipeline.Settings.DefaultDatastore = "lake"
	prep := sp.Pipeline.Steps["prep"]
	prep.Spec.Outputs["data"] = job.Output{Type: job.URIFolder, Path: "azureml://datastores/lake/paths/prepared/${{name}}/"}
	sp.Pipeline.Steps["prep"] = prep
	p := f.createPipeline(t, sp)
	lake := func(p string) *datastore.Location {
		return &datastore.Location{Datastore: "lake", Type: datastore.TypeS3, Container: "bkt", Endpoint: "http://127.0.0.1:9",
			Region: "us-east-1", Path: p}
	}
	steps := f.run(t, p.ID).Spec.Pipeline.Steps
	for step, want := range map[string]*datastore.Location{
		"prep":  lake("prepared/${{name}}"),
		"train": lake("azureml/${{name}}/model"), // default_datastore
	} {
		out := map[string]string{"prep": "data", "train": "model"}[step]
		if diff := cmp.Diff(want, steps[step].Spec.Outputs[out].Store); diff != "" {
			t.Errorf("%s's output %s at create (-want +got):\n%s", step, out, diff)
		}
	}

	f.pipelinePass(t)
	prepRun := p.ID + "_prep"
	f.reconcile(t)
	f.report(t, prepRun, job.Running)
	f.report(t, prepRun, job.Completed)
	f.pipelinePass(t)
	in := f.run(t, p.ID+"_train").Spec.Inputs["data"]
	if diff := cmp.Diff(lake("prepared/"+prepRun), in.Store); diff != "" {
		t.Errorf("train's input's place (-want +got):\n%s", diff)
	}
	if in.Manifest != "" || in.Path != "azureml://jobs/"+prepRun+"/outputs/data" || in.Mode != "download" {
		t.Errorf("train's input %+v", in)
	}
}

// A job reading another job's output that was written to an object store
// (azureml://jobs/<job>/outputs/<output>) gets its place there once that job completed, and is
// refused, saying where and when it will be, before.
func TestJobReadsAnObjectStoreOutput(t *testing.T) {
	f := newFixture(t)
	if err := f.c.Store.Assets.PutDatastore(t.Context(), datastore.Datastore{Name: "lake", Type: datastore.TypeS3,
		Bucket: "bkt", EndpointURL: "http://127.0.0.1:9", Region: "us-east-1", CreatedAt: f.c.Now()}, ""); err != nil {
		t.Fatal(err)
	}
	w, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: job.Spec{Name: "writer", Command: "echo", Compute: "local",
		Outputs: map[string]job.Output{"out": {Type: job.URIFolder, Path: "azureml://datastores/lake/paths/w/${{name}}/"}}}})
	if err != nil {
		t.Fatal(err)
	}
	reader := job.Spec{Command: "ls ${{inputs.d}}", Compute: "local",
		Inputs: map[string]job.Input{"d": {Type: job.URIFolder, Path: "azureml://jobs/writer/outputs/out"}}}
	_, err = f.c.Create(t.Context(), api.CreateJobRequest{Spec: reader})
	if want := "inputs.d.path: job writer writes its output out to s3://bkt/w/writer when it completes (status Queued)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reading a queued job's store output: %v, want %q", err, want)
	}
	f.reconcile(t)
	f.report(t, w.ID, job.Running)
	f.report(t, w.ID, job.Completed)
	r, err := f.c.Create(t.Context(), api.CreateJobRequest{Spec: reader})
	if err != nil {
		t.Fatal(err)
	}
	in := r.Spec.Inputs["d"]
	if in.Store == nil || in.Store.URI() != "s3://bkt/w/writer" || in.Store.Datastore != "lake" || in.Manifest != "" {
		t.Errorf("the reader's input %+v (store %+v)", in, in.Store)
	}
}
