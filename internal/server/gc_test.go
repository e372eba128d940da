package server

import (
	"os"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// An owner frees the blobs nothing references, older than the grace; a dry run only lists
// them; a negative grace is refused.
func TestCollectBlobsRoute(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	h, err := ts.blobs.PutBytes([]byte("nothing names me"))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(ts.blobs.Path(h), old, old); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	dry, err := ts.admin.Workspace.CollectBlobs(ctx, api.GCRequest{DryRun: true, GraceSeconds: &hour})
	if err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun || dry.Count != 1 || dry.Bytes != 16 || len(dry.Blobs) != 1 || dry.Blobs[0].Hash != h {
		t.Errorf("dry run = %+v, want the one old blob", dry)
	}
	if _, err := ts.blobs.Stat(h); err != nil {
		t.Errorf("a dry run removed the blob: %v", err)
	}
	rep, err := ts.admin.Workspace.CollectBlobs(ctx, api.GCRequest{}) // the server's grace: 1h
	if err != nil {
		t.Fatal(err)
	}
	if rep.DryRun || rep.Count != 1 || rep.Grace != "1h0m0s" {
		t.Errorf("collection = %+v, want the old blob freed under the default grace", rep)
	}
	if _, err := ts.blobs.Stat(h); err == nil {
		t.Error("the unreferenced blob is still stored")
	}
	neg := int64(-1)
	_, err = ts.admin.Workspace.CollectBlobs(ctx, api.GCRequest{GraceSeconds: &neg})
	if st, _ := apiStatus(t, err); st != 400 {
		t.Errorf("negative grace: %v, want 400", err)
	}
}
