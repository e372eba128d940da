package controller

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

func TestHashesIn(t *testing.T) {
	h := strings.Repeat("ab", 32)
	tests := []struct {
		text string
		want []string
	}{
		{`{"code_snapshot":"` + h + `"}`, []string{h}},
		{h + " " + strings.Repeat("0", 64), []string{h, strings.Repeat("0", 64)}},
		{h + "c", nil},                      // longer: not a hash
		{h[:63], nil},                       // shorter
		{strings.ToUpper(h), nil},           // hashes are lowercase
		{"x" + h + "/" + h, []string{h, h}}, // wherever they sit
	}
	for _, tt := range tests {
		var got []string
		hashesIn(tt.text, func(s string) { got = append(got, s) })
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("hashesIn(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

// A run's directory goes once the run ended keep ago; a run not ended keeps it; a run the
// workspace no longer knows (deleted) loses it where the directories are the workspace's own.
func TestDirsToRemove(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *time.Time { t := now.Add(-ago); return &t }
	ends := map[string]store.RunEnd{
		"old":     {Status: job.Completed, EndedAt: at(time.Hour)},
		"just":    {Status: job.Failed, EndedAt: at(time.Minute)},
		"exactly": {Status: job.Canceled, EndedAt: at(5 * time.Minute)},
		"running": {Status: job.Running},
		"lost":    {Status: job.NotResponding},
	}
	ids := []string{"deleted", "exactly", "just", "lost", "old", "running"}
	for _, tt := range []struct {
		private bool
		want    []string
	}{
		{true, []string{"deleted", "exactly", "old"}},
		{false, []string{"exactly", "old"}},
	} {
		got := dirsToRemove(ids, ends, tt.private, now, 5*time.Minute)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("private %v (-want +got):\n%s", tt.private, diff)
		}
	}
}

// gcFixture is a fixture whose blobs can be aged, with a backend that keeps run directories.
type gcFixture struct {
	*fixture
	dirs *dirKeeper
}

// dirKeeper is the fake backend with run directories the controller can list and remove.
type dirKeeper struct {
	*backendtest.Fake
	dirs    []string
	removed []string
}

func (k *dirKeeper) RunDirsOn(ctx context.Context, t compute.Target) ([]string, bool, error) {
	return slices.Clone(k.dirs), true, nil
}

func (k *dirKeeper) RemoveRunDirOn(ctx context.Context, t compute.Target, id string) error {
	k.removed = append(k.removed, id)
	k.dirs = slices.DeleteFunc(k.dirs, func(d string) bool { return d == id })
	return nil
}

func newGCFixture(t *testing.T) *gcFixture {
	f := newFixture(t)
	k := &dirKeeper{Fake: f.fake}
	f.c.Backends[compute.TypeLocal] = k
	f.c.Settings.BlobGrace = time.Hour
	return &gcFixture{fixture: f, dirs: k}
}

// put stores b and makes it look written ago before now (and never asked for since).
func (f *gcFixture) put(t *testing.T, b string, ago time.Duration) string {
	t.Helper()
	h, err := f.c.Blobs.PutBytes([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	f.age(t, h, ago)
	return h
}

func (f *gcFixture) age(t *testing.T, h string, ago time.Duration) {
	t.Helper()
	at := time.Now().Add(-ago)
	if err := os.Chtimes(f.c.Blobs.Path(h), at, at); err != nil {
		t.Fatal(err)
	}
}

// manifest stores a manifest of the files (path → content), all aged ago, and returns its hash
// and theirs.
func (f *gcFixture) manifest(t *testing.T, ago time.Duration, files map[string]string) (string, []string) {
	t.Helper()
	m := &snapshot.Manifest{}
	var hashes []string
	for p, c := range files {
		h := f.put(t, c, ago)
		hashes = append(hashes, h)
		m.Entries = append(m.Entries, snapshot.Entry{Path: p, Type: snapshot.TypeFile, Hash: h, Size: int64(len(c)), Mode: 0o644})
	}
	b, _, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return f.put(t, string(b), ago), hashes
}

func (f *gcFixture) stored(hashes ...string) []bool {
	var out []bool
	for _, h := range hashes {
		_, err := f.c.Blobs.Stat(h)
		out = append(out, err == nil)
	}
	return out
}

// ended makes a run Completed at the clock's time with these artifacts, as its supervisor's
// report does, handed to the local backend.
func (f *gcFixture) ended(t *testing.T, id, artifacts string) {
	t.Helper()
	now := f.clock.Now()
	_, err := f.c.Store.RunWrites.UpdateRun(t.Context(), id, func(r *job.Run) ([]job.Event, error) {
		r.Status, r.EndedAt, r.ArtifactsHash, r.Handle = job.Completed, &now, artifacts, []byte(`{}`)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The collector frees what nothing references and is older than the grace: it keeps what a job
// or a model names (and the files their manifests list), and what is young (an upload whose
// job is not created yet, with the files its manifest lists). A dry run frees nothing.
func TestCollectBlobs(t *testing.T) {
	f := newGCFixture(t)
	ctx := t.Context()
	code, codeFiles := f.manifest(t, 2*time.Hour, map[string]string{"train.py": "print(1)\n"})
	f.create(t, job.Spec{CodeSnapshot: code})
	f.age(t, code, 2*time.Hour) // Create asked for it (Has), which made it young
	weights, weightFiles := f.manifest(t, 2*time.Hour, map[string]string{"w.bin": "weights"})
	if _, err := f.c.Store.Assets.CreateModel(ctx, model.Version{Name: "m", Type: model.CustomModel, Manifest: weights,
		Source: model.SourceLocal, CreatedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	garbage := f.put(t, "a blob nothing names, uploaded long ago", 2*time.Hour)
	young := f.put(t, "uploaded a minute ago", time.Minute)
	upload, uploadFiles := f.manifest(t, 2*time.Hour, map[string]string{"big.bin": "uploaded before its manifest"})
	f.age(t, upload, time.Minute) // its manifest came last, a minute ago

	dry, err := f.c.GC.CollectBlobs(ctx, true, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.GCReport{DryRun: true, Grace: "1h0m0s", Blobs: []api.GCBlob{{Hash: garbage, Size: 39}}, Count: 1, Bytes: 39, Kept: 7,
		KeptBytes: dry.KeptBytes}
	if diff := cmp.Diff(want, dry); diff != "" {
		t.Errorf("dry run (-want +got):\n%s", diff)
	}
	if got := f.stored(garbage); !got[0] {
		t.Fatal("a dry run removed a blob")
	}
	rep, err := f.c.GC.CollectBlobs(ctx, false, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count != 1 || rep.Bytes != 39 || rep.DryRun {
		t.Errorf("collection = %+v, want the one unreferenced old blob (39 bytes)", rep)
	}
	kept := append([]string{code, weights, young, upload}, append(append(codeFiles, weightFiles...), uploadFiles...)...)
	if diff := cmp.Diff(slices.Repeat([]bool{true}, len(kept)), f.stored(kept...)); diff != "" {
		t.Errorf("blobs kept (-want +got):\n%s", diff)
	}
	if got := f.stored(garbage); got[0] {
		t.Error("the unreferenced old blob is still stored")
	}
}

// Deleting a run frees its directory (through its backend) and the blobs only it referenced;
// those another run references stay.
func TestDeleteRunFreesWhatOnlyItUsed(t *testing.T) {
	f := newGCFixture(t)
	ctx := t.Context()
	code, codeFiles := f.manifest(t, 2*time.Hour, map[string]string{"train.py": "print(1)\n"})
	a := f.create(t, job.Spec{CodeSnapshot: code})
	b := f.create(t, job.Spec{CodeSnapshot: code})
	f.age(t, code, 2*time.Hour)
	outs, outFiles := f.manifest(t, 2*time.Hour, map[string]string{"outputs/model.bin": "a's model"})
	f.ended(t, a.ID, outs)
	f.dirs.dirs = []string{a.ID, b.ID}

	if err := f.c.DeleteRun(ctx, b.ID); err == nil || !strings.Contains(err.Error(), "has not ended") {
		t.Errorf("delete a queued run: %v, want a refusal", err)
	}
	if err := f.c.DeleteRun(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a.ID}, f.dirs.removed); diff != "" {
		t.Errorf("run directories removed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, false}, f.stored(outs, outFiles[0])); diff != "" {
		t.Errorf("the deleted run's own outputs stored (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true}, f.stored(code, codeFiles[0])); diff != "" {
		t.Errorf("the code another run uses stored (-want +got):\n%s", diff)
	}
}

// The housekeeping pass removes the directories of runs that ended keep ago and of deleted
// runs, and leaves the others.
func TestRemoveRunDirs(t *testing.T) {
	f := newGCFixture(t)
	f.c.Settings.KeepRunDirs = 5 * time.Minute
	a := f.create(t, job.Spec{})
	b := f.create(t, job.Spec{})
	f.ended(t, a.ID, "")
	f.dirs.dirs = []string{a.ID, b.ID, "deleted_run"}
	j := &janitor{c: f.c, log: f.c.Log, told: map[string]string{}}
	j.removeRunDirs(t.Context())
	if diff := cmp.Diff([]string{"deleted_run"}, f.dirs.removed); diff != "" {
		t.Errorf("removed right after the end (-want +got):\n%s", diff)
	}
	f.clock.Advance(5 * time.Minute)
	j.removeRunDirs(t.Context())
	if diff := cmp.Diff([]string{"deleted_run", a.ID}, f.dirs.removed); diff != "" {
		t.Errorf("removed once kept 5 minutes (-want +got):\n%s", diff)
	}
}
