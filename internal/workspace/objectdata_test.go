package workspace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
)

// An input reading a job's output that the job wrote to an object store (a pipeline's step
// bound to its producer, or azureml://jobs/<job>/outputs/<output>) is that place, the producer's
// ${{name}} expanded, once the producer completed; an output in the workspace is not (its files
// are bound by manifest).
func TestJobStoreOutput(t *testing.T) {
	s3 := func(p string) *datastore.Location {
		return &datastore.Location{Datastore: "lake", Type: datastore.TypeS3, Container: "bkt",
			Endpoint: "http://10.0.0.1:9000", Region: "us-east-1", Path: p}
	}
	producer := func(status job.State, outs map[string]job.Output) *job.Run {
		return &job.Run{ID: "p1_prep", Status: status, Spec: job.Spec{Outputs: outs}}
	}
	decl := job.Input{Type: job.URIFolder, Mode: "download", Path: "azureml://jobs/p1_prep/outputs/data"}
	cases := []struct {
		name    string
		src     *job.Run
		mode    string
		want    *datastore.Location
		path    string // the input's path after (its declaration's, or the store's URI in direct mode)
		wantErr string
	}{
		{name: "name expanded", src: producer(job.Completed, map[string]job.Output{"data": {Type: job.URIFolder, Store: s3("runs/${{name}}/data")}}),
			want: s3("runs/p1_prep/data"), path: decl.Path},
		{name: "a fixed path", src: producer(job.Completed, map[string]job.Output{"data": {Store: s3("shared/prepared")}}),
			want: s3("shared/prepared"), path: decl.Path},
		{name: "direct mode: the store's URI", src: producer(job.Completed, map[string]job.Output{"data": {Store: s3("runs/${{name}}")}}),
			mode: "direct", path: "s3://bkt/runs/p1_prep"},
		{name: "not completed", src: producer(job.Running, map[string]job.Output{"data": {Store: s3("runs/${{name}}")}}),
			wantErr: "inputs.data.path: job p1_prep writes its output data to s3://bkt/runs/p1_prep when it completes (status Running)"},
		{name: "an output in the workspace", src: producer(job.Completed, map[string]job.Output{"data": {Type: job.URIFolder}})},
		{name: "another output in a store", src: producer(job.Completed, map[string]job.Output{"stats": {Store: s3("x")}})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := decl
			if c.mode != "" {
				in.Mode = c.mode
			}
			got, ok, err := jobStoreOutput("data", in, c.src, "data")
			if c.wantErr != "" {
				if !ok || err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v %v, want %q", ok, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != (c.path != "") {
				t.Fatalf("a store output: %v, want %v", ok, c.path != "")
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(c.want, got.Store); diff != "" {
				t.Errorf("location (-want +got):\n%s", diff)
			}
			if got.Path != c.path || got.Manifest != "" {
				t.Errorf("input %+v: path %q and no manifest wanted", got, c.path)
			}
		})
	}
	// The producer's stored location keeps its ${{name}}.
	src := producer(job.Completed, map[string]job.Output{"data": {Store: s3("runs/${{name}}")}})
	jobStoreOutput("data", decl, src, "data")
	if p := src.Spec.Outputs["data"].Store.Path; p != "runs/${{name}}" {
		t.Errorf("the producer's location became %q", p)
	}
}
