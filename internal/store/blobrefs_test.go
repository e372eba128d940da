package store

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
)

// BlobRefs reads the values that name blobs wherever they are kept (a run's spec, its artifacts
// and outputs, a model's manifest), and leaves out the tables that never name one (a log line
// that prints a hash keeps nothing); RunBlobRefs reads one run's rows only.
func TestBlobRefs(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	h := func(c string) string { return strings.Repeat(c, 64) }
	now := time.Unix(1700000000, 0).UTC()
	r := &job.Run{ID: "r1", Compute: "local", Status: job.Queued, CreatedAt: now, Attempt: 1,
		Spec: job.Spec{Type: "command", Command: "echo hi", CodeSnapshot: h("1")}, NamedOutputs: map[string]string{"model": h("3")}}
	if err := s.RunWrites.CreateRun(ctx, r, job.Event{Time: now, From: job.NotStarted, To: job.Queued}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunWrites.UpdateRun(ctx, "r1", func(r *job.Run) ([]job.Event, error) { r.ArtifactsHash = h("2"); return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.CreateModel(ctx, model.Version{Name: "m", Type: model.CustomModel, Manifest: h("4"), Source: model.SourceLocal, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Runs.AppendLogs(ctx, "r1", "std_log.txt", []job.LogLine{{Seq: 1, Time: now, Text: "sha256 " + h("5")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Tracking.PutMLflowArtifact(ctx, MLflowArtifact{RunID: "r1", Path: "plot.png", Hash: h("6"), Size: 1, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		read func(fn func(string)) error
		want map[string]bool
	}{
		{"BlobRefs", func(fn func(string)) error { return s.BlobRefs(ctx, fn) },
			map[string]bool{"1": true, "2": true, "3": true, "4": true, "6": true}},
		{"RunBlobRefs(r1)", func(fn func(string)) error { return s.RunBlobRefs(ctx, "r1", fn) },
			map[string]bool{"1": true, "2": true, "3": true, "6": true}},
	} {
		found := map[string]bool{}
		err := tt.read(func(text string) {
			for _, c := range []string{"1", "2", "3", "4", "5", "6"} {
				if strings.Contains(text, h(c)) {
					found[c] = true
				}
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, found); diff != "" {
			t.Errorf("%s: hashes found (-want +got):\n%s", tt.name, diff)
		}
	}
}

// RunEnds says which runs exist, their status and end; a deleted run is absent.
func TestRunEnds(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	now := time.Unix(1700000000, 0).UTC()
	end := now.Add(time.Minute)
	for _, r := range []*job.Run{
		{ID: "done", Compute: "local", Status: job.Completed, CreatedAt: now, EndedAt: &end, Attempt: 1, Spec: job.Spec{Type: "command", Command: "true"}},
		{ID: "busy", Compute: "local", Status: job.Running, CreatedAt: now, Attempt: 1, Spec: job.Spec{Type: "command", Command: "true"}},
	} {
		if err := s.RunWrites.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Runs.RunEnds(ctx, []string{"done", "busy", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]RunEnd{"done": {Status: job.Completed, EndedAt: &end}, "busy": {Status: job.Running}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunEnds (-want +got):\n%s", diff)
	}
}
