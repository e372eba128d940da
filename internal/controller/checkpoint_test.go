package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

func TestLostWork(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	ago := func(d time.Duration) *time.Time { v := at.Add(-d); return &v }
	for _, tc := range []struct {
		name                string
		started, checkpoint *time.Time
		want                time.Duration
	}{
		{"never started: nothing ran", nil, ago(time.Minute), 0},
		{"no checkpoint: everything since the start", ago(5 * time.Minute), nil, 5 * time.Minute},
		{"since the checkpoint saved by this attempt", ago(5 * time.Minute), ago(42 * time.Second), 42 * time.Second},
		{"a checkpoint of an earlier attempt: since this attempt's start", ago(time.Minute), ago(time.Hour), time.Minute},
		{"a clock that puts the save after the preemption: nothing", ago(time.Minute), ago(-time.Second), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LostWork(at, tc.started, tc.checkpoint); got != tc.want {
				t.Errorf("LostWork = %s, want %s", got, tc.want)
			}
		})
	}
}

// The wait after a preemption runs to the next start of the command; the checkpoint resumed
// from is the one recorded at the requeue.
func TestPreemptionCost(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	started, saved := at.Add(-time.Minute), at.Add(-20*time.Second)
	p := store.Preemption{Attempt: 1, Node: "n1", At: at, StartedAt: &started, CheckpointAt: &saved}
	events := []job.Event{
		{Time: started, To: job.Running},
		{Time: at, To: job.Queued, Reason: "requeue"},
		{Time: at.Add(8 * time.Second), To: job.Preparing},
		{Time: at.Add(12 * time.Second), To: job.Running},
	}
	wait := 12.0
	want := api.Preemption{Attempt: 1, Node: "n1", At: at, LostSeconds: 20, WaitSeconds: &wait, ResumedFrom: &saved}
	if diff := cmp.Diff(want, PreemptionCost(p, events)); diff != "" {
		t.Errorf("PreemptionCost (-want +got):\n%s", diff)
	}
	want.WaitSeconds = nil
	if diff := cmp.Diff(want, PreemptionCost(p, events[:3])); diff != "" {
		t.Errorf("not started again (-want +got):\n%s", diff)
	}
}

// A checkpoint is committed only once its manifest and every file it names are stored: a save
// cut short by a lost node leaves the good one before it in place, and the run's next spec
// restores that one.
func TestCommitCheckpointNeedsEveryFile(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	r := f.create(t, job.Spec{Compute: "local"})
	manifest := func(content string, upload bool) string {
		h := sha(t, f, content, upload)
		m := &snapshot.Manifest{Entries: []snapshot.Entry{{Path: "step", Type: snapshot.TypeFile, Hash: h, Size: int64(len(content)), Mode: 0o644}}}
		b, mh, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.c.Blobs.PutBytes(b); err != nil {
			t.Fatal(err)
		}
		return mh
	}
	at := f.clock.Now()
	good := manifest("7", true)
	if err := f.c.Checkpoints.CommitCheckpoint(ctx, r.ID, api.CheckpointCommit{Attempt: 1, Manifest: good, SavedAt: at}); err != nil {
		t.Fatalf("commit a whole checkpoint: %v", err)
	}
	half := manifest("9", false)
	err := f.c.Checkpoints.CommitCheckpoint(ctx, r.ID, api.CheckpointCommit{Attempt: 1, Manifest: half, SavedAt: at.Add(time.Second)})
	wantKind(t, err, Conflict, "file step", "is not uploaded")
	err = f.c.Checkpoints.CommitCheckpoint(ctx, r.ID, api.CheckpointCommit{Attempt: 1, Manifest: "not a hash", SavedAt: at})
	wantKind(t, err, Invalid, "manifest")
	spec, err := f.c.RunSpec(ctx, r.ID, "", "http://server")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Checkpoint == nil || spec.Checkpoint.Manifest != good || spec.Checkpoint.Files != 1 || spec.Checkpoint.Bytes != 1 {
		t.Errorf("the spec restores %+v, want the whole checkpoint %s", spec.Checkpoint, good)
	}
}

// sha stores content in the blob store (or only hashes it) and returns its hash.
func sha(t testing.TB, f *fixture, content string, upload bool) string {
	t.Helper()
	if upload {
		h, err := f.c.Blobs.PutBytes([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}
